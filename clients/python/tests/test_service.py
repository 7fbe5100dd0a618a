"""The client against a real coordinator and a real worker: jobs of several kinds (exact,
analysis, MCTS, NRPA, a proof) submitted, followed over Server-Sent Events and checked against
the command line's in-process results; cancel, wait timeouts, paging, pictures, errors."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Iterator

import pytest

from conftest import API_TOKEN, Service, cli, start_service
from gamesolver_client import (
    AsyncClient,
    BadRequest,
    Client,
    Conflict,
    CoordinatorUnreachable,
    InvalidJob,
    JobCancelled,
    JobStatus,
    NotFound,
    Unauthorized,
    WaitTimeout,
    figure,
)
from gamesolver_client import _core
from gamesolver_client import Setting

# Pons' Test_L1_R2 position: the side to move loses (-2); about 0.1 M nodes.
C4 = "335662333565"
# MCTS that would run for hours: a job to cancel or to time out on.
ENDLESS_MCTS = {"playouts": 1_000_000_000_000, "seed": 5}


@pytest.fixture
def client(service: Service, token_env: None) -> Iterator[Client]:
    with Client(service.url) as c:
        yield c


def cli_json(*args: str) -> dict[str, object]:
    out = cli(*args)
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout)
    assert isinstance(d, dict)
    return d


def test_exact_job_is_followed_over_events_and_matches_the_cli(client: Client) -> None:
    job = client.submit("connect4", C4, algorithm="alphabeta")
    seen: list[JobStatus] = []
    final = job.follow(progress=seen.append)
    assert final.state == "done" and final.result is not None
    assert seen and seen[-1] == final
    # The exact value's probe plan: the bar counts probes and shows the bounds.
    f = figure(final)
    assert f.unit == "probes" and f.n >= 1 and "value -2" in f.text, f
    want = cli_json("solve", "--game", "connect4", "--position", C4, "--algorithm", "alphabeta", "--json")
    assert final.result.value == want["value"] == -2
    assert final.result.best_move == want["best_move"]
    assert final.result.get("pv") == want["pv"]
    # The status says the same once the job has ended; the tasks page lists its probes.
    assert job.status().result == final.result
    tasks = list(job.iter_tasks(page_size=1))
    assert len(tasks) == final.tasks.total >= 2
    assert all(t.what.startswith("probe value >=") for t in tasks)
    assert [t.id for t in tasks] == sorted(t.id for t in tasks)


def test_analysis_gives_every_moves_score_as_the_cli_does(client: Client) -> None:
    analysis = client.analyse("connect4", C4, algorithm="alphabeta", timeout=120)
    want = cli_json("analyse", "--game", "connect4", "--position", C4, "--algorithm", "alphabeta", "--json")
    wanted_moves = want["moves"]
    assert isinstance(wanted_moves, dict)
    assert {m.move: {"value": m.value} for m in analysis.moves} == wanted_moves
    assert analysis.value == want["value"] and analysis.best_move == want["best_move"]
    # Best first, in the order and with the words of `gamesolver analyse`.
    text = cli("analyse", "--game", "connect4", "--position", C4, "--algorithm", "alphabeta").stdout
    rows = [line.split(None, 1) for line in text.splitlines()[1 : 1 + len(analysis.moves)]]
    assert [[m.move, str(m)] for m in analysis.moves] == [[r[0], r[1].strip()] for r in rows]
    frame = analysis.to_dataframe()
    assert list(frame["move"]) == [m.move for m in analysis.moves]
    assert frame["exact"].all()
    assert frame.loc[0, "meaning"] == "loss to the opponent's 14th stone from here"
    # The job's own analysis reads back the same, and the figure counted moves.
    page = client.jobs(limit=1)
    again = client.analysis(page.jobs[0].id)
    assert again.moves == analysis.moves


def test_mcts_job_split_in_runs_matches_the_cli(client: Client) -> None:
    options: dict[str, Setting] = {"playouts": 200_000, "trees": 2, "tasks": 2, "seed": 7, "analyse": "all"}
    job = client.submit("connect4", "4453", algorithm="mcts", options=options)
    figures = []
    final = job.follow(progress=lambda st: figures.append(figure(st)))
    assert final.state == "done" and final.result is not None
    assert figures[-1].unit == "runs" and figures[-1].total == 2 and figures[-1].n == 2
    args = [f"--option={k}={v}" for k, v in options.items()]
    want = cli_json("solve", "--game", "connect4", "--position", "4453", "--algorithm", "mcts", *args, "--json")
    assert final.result.get("visits") == want["visits"]
    assert final.result.best_move == want["best_move"]
    moves = final.result.moves
    assert sum(m.visits or 0 for m in moves) == final.result.nodes == 200_000
    assert moves[0].move == final.result.best_move
    assert job.plot().text.lstrip().startswith("<svg")


def test_a_running_mcts_task_reports_its_playouts(client: Client) -> None:
    # A running task reports at each heartbeat (every second here): the bar counts the
    # kernel's playouts against the job's. The job is cancelled once one report was seen.
    job = client.submit("connect4", "", algorithm="mcts", options=ENDLESS_MCTS)
    figures = []

    def seen(st: JobStatus) -> None:
        f = figure(st)
        figures.append(f)
        if f.unit == "playouts" and not st.ended and not cancelled:
            cancelled.append(job.cancel())

    cancelled: list[JobStatus] = []

    final = job.follow(progress=seen, timeout=120)
    assert final.state == "cancelled"
    running = [f for f in figures if f.unit == "playouts"]
    assert running, figures
    assert all(f.total == ENDLESS_MCTS["playouts"] and 0 < f.n < f.total for f in running)
    assert all("most visited" in f.text for f in running)


def test_nrpa_job_matches_the_cli(client: Client) -> None:
    options = {"level": 2, "iterations": 30, "seed": 3, "runs": 3}
    result = client.solve("weakschur", algorithm="nrpa", game_params={"k": 3}, options=options, timeout=120)
    args = [f"--option={k}={v}" for k, v in options.items()]
    want = cli_json("solve", "--game", "weakschur", "--game-param", "k=3", "--algorithm", "nrpa", *args, "--json")
    assert result.value == want["value"]
    assert result.get("sequence") == want["sequence"]
    assert result.get("run_scores") == want["run_scores"]
    assert result.best_move is None


def test_proof_certificate_is_downloaded_and_verifies(client: Client, tmp_path: Path) -> None:
    job = client.submit("tictactoe", "12", algorithm="dfpn", options={"target": 1, "proof": True})
    result = job.wait(timeout=120)
    assert result.get("proved") is True
    path = job.save_proof(tmp_path / "proof.json")
    checked = cli("verify-proof", str(path), "--json")
    assert checked.returncode == 0, checked.stderr
    claim = json.loads(checked.stdout)
    assert claim["claim"] == "at_least" and claim["lower"] == 1 and claim["position"] == "12"
    # The same decision as the command line's own certificate.
    local = tmp_path / "local.json"
    out = cli("solve", "--game", "tictactoe", "--position", "12", "--algorithm", "dfpn",
              "--option", "target=1", "--proof", str(local), "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["proved"] is True
    assert json.loads(local.read_text())["claim"] == job.proof()["claim"]
    # A job without a certificate: the server's 404.
    plain = client.submit("tictactoe", "12", algorithm="alphabeta")
    plain.wait(timeout=60)
    with pytest.raises(NotFound) as e:
        plain.proof()
    assert e.value.code == "not_found" and e.value.status == 404


def test_cancel_ends_a_job_and_a_second_cancel_is_a_conflict(client: Client) -> None:
    job = client.submit("connect4", "", algorithm="mcts", options=ENDLESS_MCTS)
    after = job.cancel()
    assert after.state == "cancelled"
    with pytest.raises(JobCancelled) as e:
        job.wait(timeout=60)
    assert e.value.job_id == job.id and "cancel" in e.value.reason
    with pytest.raises(Conflict) as c:
        job.cancel()
    assert c.value.status == 409 and c.value.code == "conflict"


def test_wait_with_a_timeout_raises_and_leaves_the_job_running(client: Client) -> None:
    job = client.submit("connect4", "", algorithm="mcts", options=ENDLESS_MCTS)
    try:
        with pytest.raises(WaitTimeout) as e:
            job.wait(timeout=1.0)
        assert e.value.job_id == job.id
        assert job.status().state in ("queued", "running")
    finally:
        job.cancel()


def test_bad_input_raises_the_servers_error(client: Client, service: Service) -> None:
    # Checked on the client side against the declared specs: nothing is sent.
    with pytest.raises(InvalidJob, match="out of bounds"):
        client.submit("connect4", "4453", algorithm="mcts", options={"playouts": 0})
    with pytest.raises(InvalidJob, match="unknown option 'depht'"):
        client.submit("connect4", "4453", algorithm="alphabeta", options={"depht": 3})
    with pytest.raises(InvalidJob, match="game parameter 'width'"):
        client.submit("connect4", "", algorithm="alphabeta", game_params={"width": 99})
    # The server's own checks, with its code and message.
    with pytest.raises(BadRequest) as e:
        client.submit("connect4", "4453x", algorithm="alphabeta")
    assert e.value.status == 400 and e.value.code == "bad_request" and "position" in e.value.message
    with pytest.raises(BadRequest) as e:
        client.submit("chess", "", algorithm="alphabeta")
    assert "chess" in e.value.message
    with Client(service.url, check_options=False) as unchecked:
        with pytest.raises(BadRequest) as e:
            unchecked.submit("connect4", "4453", algorithm="mcts", options={"playouts": 0})
        assert "playouts" in e.value.message and "out of bounds" in e.value.message
    with pytest.raises(NotFound) as n:
        client.status(999_999)
    assert n.value.code == "not_found"
    with pytest.raises(BadRequest):
        client.board("connect4", "99999999")


def test_the_token_comes_from_the_environment(service: Service, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GAMESOLVER_API_TOKEN", raising=False)
    with Client(service.url) as anonymous, pytest.raises(Unauthorized) as e:
        anonymous.jobs()
    assert e.value.code == "unauthorized" and "GAMESOLVER_API_TOKEN" in e.value.message
    monkeypatch.setenv("GAMESOLVER_API_TOKEN", API_TOKEN)
    with Client(service.url) as c:
        assert isinstance(c.jobs().jobs, list)
    with Client(service.url, token="wrong") as c, pytest.raises(Unauthorized):
        c.service_status()


def test_jobs_are_listed_newest_first_and_paged(client: Client) -> None:
    ids = [client.submit("tictactoe", p, algorithm="alphabeta").id for p in ("1", "5", "9")]
    for i in ids:
        client.wait(i, timeout=60)
    listed = [j.id for j in client.iter_jobs(page_size=2)]
    assert listed == sorted(listed, reverse=True)
    assert listed[:3] == ids[::-1]
    page = client.jobs(limit=2)
    assert len(page.jobs) == 2 and page.next_before == page.jobs[-1].id
    rest = client.jobs(limit=1000, before=page.next_before)
    assert [j.id for j in page.jobs + rest.jobs] == listed
    assert rest.next_before is None
    assert page.jobs[0].summary.startswith("tictactoe alphabeta")


def test_boards_are_svg_pictures(client: Client) -> None:
    svg = client.board("connect4", "4453")
    assert svg is not None and svg._repr_svg_().lstrip().startswith("<svg")
    small = client.board("connect4", "", width=5, height=4)
    full = client.board("connect4", "")
    assert small is not None and full is not None and small.text != full.text
    assert client.board("nim", "1,2,3") is None  # a game without pictures
    job = client.submit("tictactoe", "15", algorithm="alphabeta")
    pic = job.board()
    assert pic is not None and "<svg" in pic.text


def test_options_list_the_declared_bounds(client: Client) -> None:
    specs = {s.name: s for s in client.options("connect4", "mcts")}
    assert specs["playouts"].type == "integer" and specs["playouts"].minimum == 1
    assert specs["seed"].maximum == 2**64 - 1
    assert specs["width"].param and not specs["playouts"].param
    with pytest.raises(NotFound):
        client.options("nim", "nrpa")


def test_every_route_the_client_calls_is_in_the_openapi_document(client: Client) -> None:
    doc = client.openapi()
    served = {(m.upper(), p) for p, item in doc["paths"].items() for m in item}
    missing = [r for r in _core.ROUTES if r not in served]
    assert not missing, missing


def test_the_async_client_does_the_same(service: Service, token_env: None) -> None:
    async def run() -> None:
        async with AsyncClient(service.url) as c:
            analysis = await c.analyse("tictactoe", "1", algorithm="alphabeta", timeout=60)
            assert {m.move for m in analysis.moves} == set("23456789")
            assert analysis.value == 0 and all(m.meaning for m in analysis.moves)
            job = await c.submit("connect4", C4, algorithm="alphabeta")
            events = [st async for st in job.events()]
            assert events[-1].ended and events[-1].result is not None
            assert events[-1].result.value == -2
            tasks = [t async for t in job.iter_tasks(page_size=1)]
            assert len(tasks) == events[-1].tasks.total >= 2
            endless = await c.submit("connect4", "", algorithm="mcts", options=ENDLESS_MCTS)
            with pytest.raises(WaitTimeout):
                await endless.wait(timeout=1.0)
            assert (await endless.cancel()).state == "cancelled"
            with pytest.raises(JobCancelled):
                await endless.wait(timeout=60)
            with pytest.raises(BadRequest):
                await c.submit("connect4", "0", algorithm="alphabeta")
            pages = [j.id async for j in c.iter_jobs(page_size=2)]
            assert job.id in pages and endless.id in pages
            assert (await c.board("connect4", "4")) is not None

    asyncio.run(run())


def test_a_stopped_coordinator_raises_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    s = start_service(tmp_path / "svc", workers=1, threads=1)
    monkeypatch.setenv("GAMESOLVER_API_TOKEN", API_TOKEN)
    try:
        with Client(s.url, reconnect=1.0) as c:
            job = c.submit("connect4", "", algorithm="mcts", options=ENDLESS_MCTS)
            seen: list[JobStatus] = []

            def stop_on_first(st: JobStatus) -> None:
                seen.append(st)
                if len(seen) == 1:
                    s.coordinator.kill9()

            # The timeout only turns a hang into a failure: the error must come first.
            with pytest.raises(CoordinatorUnreachable) as e:
                job.follow(progress=stop_on_first, timeout=60)
            assert s.url in str(e.value) and "cannot reach the coordinator" in str(e.value)
            with pytest.raises(CoordinatorUnreachable):
                c.submit("tictactoe", "", algorithm="alphabeta")
            assert not c.healthy()
    finally:
        s.stop()
