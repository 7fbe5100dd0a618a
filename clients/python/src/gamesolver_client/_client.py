"""The synchronous client: :class:`Client` and its job handle :class:`Job`."""

from __future__ import annotations

import json
import queue
import threading
import time
from pathlib import Path
from typing import Any, Iterator, Mapping

import httpx

from . import _core
from ._errors import (
    CoordinatorUnreachable,
    GamesolverError,
    JobCancelled,
    JobFailed,
    NotFound,
    ServerError,
    WaitTimeout,
)
from ._options import check_settings
from ._progress import ProgressArg
from ._sse import SseParser
from ._types import (
    Analysis,
    JobPage,
    JobSpec,
    JobStatus,
    JobSummary,
    OptionSpec,
    Result,
    Setting,
    Svg,
    TaskInfo,
    TaskPage,
)


def result_of(status: JobStatus) -> Result:
    """The result of an ended job; raises :class:`JobFailed` or :class:`JobCancelled`."""
    if status.state == "cancelled":
        raise JobCancelled(status)
    if status.state != "done" or status.result is None:
        raise JobFailed(status)
    return status.result


class Client:
    """A client of one gamesolver coordinator.

    ``url`` defaults to ``GAMESOLVER_URL``, then ``http://127.0.0.1:8080``; ``token`` to
    ``GAMESOLVER_API_TOKEN`` (sent as ``Authorization: Bearer``, as the CLI does). ``timeout``
    bounds each short request, in seconds (event streams have a read timeout above the
    coordinator's keep-alive instead). ``check_options`` checks each job's options and game
    parameters against ``GET /v1/options`` before sending it. ``reconnect`` is how long
    following a job keeps trying to reach a coordinator that stopped answering before it raises
    :class:`CoordinatorUnreachable`.

    Use it as a context manager, or call :meth:`close`, to release its connections.
    """

    def __init__(
        self,
        url: str | None = None,
        *,
        token: str | None = None,
        timeout: float = 30.0,
        check_options: bool = True,
        reconnect: float = _core.DEFAULT_RECONNECT,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.url = _core.resolve_url(url)
        self._token = _core.resolve_token(token)
        self.timeout = timeout
        self.check_options = check_options
        self.reconnect = reconnect
        self._http = httpx.Client(
            base_url=self.url,
            headers=_core.headers(self._token),
            timeout=_core.timeouts(timeout),
            transport=transport,
        )
        self._specs: dict[tuple[str, str], list[OptionSpec] | None] = {}

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Closes the client's connections."""
        self._http.close()

    def __repr__(self) -> str:
        return f"Client({self.url!r})"

    # -- plumbing -----------------------------------------------------------------------------

    def _send(self, r: _core.Request) -> httpx.Response:
        try:
            resp = self._http.request(r.method, r.path, params=r.params, json=r.body)
        except httpx.TransportError as e:
            raise _core.unreachable(self.url, e) from e
        return resp

    def _call(self, r: _core.Request) -> Any:
        return _core.decode(self._send(r))

    # -- jobs ---------------------------------------------------------------------------------

    def submit(
        self,
        game: str,
        position: str = "",
        *,
        algorithm: str,
        game_params: Mapping[str, Setting] | None = None,
        options: Mapping[str, Setting] | None = None,
        time_ms: int | None = None,
        node_limit: int | None = None,
    ) -> Job:
        """Submits a job (docs/API.md, section 2.1) and returns its handle.

        ``game_params`` and ``options`` take strings, numbers or booleans; ``time_ms`` bounds
        the whole job's wall-clock time, ``node_limit`` each task's work. With
        ``check_options`` the options and game parameters are first checked against the specs
        the coordinator declares (:class:`InvalidJob`); the coordinator checks everything
        (:class:`BadRequest`, with its message).
        """
        spec = _core.job_spec(game, position, algorithm, game_params, options, time_ms, node_limit)
        return self.submit_spec(spec)

    def submit_spec(self, spec: JobSpec) -> Job:
        """Submits a :class:`JobSpec`; see :meth:`submit`."""
        if self.check_options:
            specs = self._declared(spec.game, spec.algorithm)
            if specs is not None:
                opts, params = check_settings(
                    spec.game, spec.algorithm, specs, spec.options, spec.game_params
                )
                spec = JobSpec(
                    spec.game, spec.algorithm, spec.position, params, opts,
                    spec.time_ms, spec.node_limit,
                )
        d = self._call(_core.Request("POST", "/v1/jobs", body=spec.to_json()))
        return Job(self, int(d["id"]))

    def _declared(self, game: str, algorithm: str) -> list[OptionSpec] | None:
        key = (game, algorithm)
        if key not in self._specs:
            try:
                self._specs[key] = self.options(game, algorithm)
            except NotFound:
                # The pair is not run by the registry: the submit's 400 says why.
                self._specs[key] = None
        return self._specs[key]

    def job(self, job_id: int) -> Job:
        """The handle of job ``job_id`` (no request is made)."""
        _core.job_path(job_id)
        return Job(self, job_id)

    def status(self, job_id: int) -> JobStatus:
        """``GET /v1/jobs/{id}``: the job's state, progress, tasks and result."""
        return _core.read_status(self._call(_core.Request("GET", _core.job_path(job_id))))

    def cancel(self, job_id: int) -> JobStatus:
        """Cancels the job; returns its status after the cancel. A job that has already ended
        raises :class:`Conflict`."""
        return _core.read_status(
            self._call(_core.Request("POST", _core.job_path(job_id, "/cancel")))
        )

    def events(self, job_id: int) -> Iterator[JobStatus]:
        """The job's statuses as its event stream sends them (section 6.3): the current one
        first, then one per change, the last one the job's end. Ends when the stream does; a
        dropped stream raises :class:`CoordinatorUnreachable` (:meth:`follow` reopens it)."""
        parser = SseParser()
        try:
            with self._http.stream(
                "GET",
                _core.job_path(job_id, "/events"),
                headers={"Accept": "text/event-stream"},
                timeout=_core.stream_timeouts(self.timeout),
            ) as resp:
                if resp.status_code >= 400:
                    resp.read()
                    _core.check(resp)
                for line in resp.iter_lines():
                    st, last = _core.stream_status(parser, line)
                    if st is not None:
                        yield st
                        if last:
                            return
        except httpx.TransportError as e:
            raise _core.unreachable(self.url, e) from e

    def _statuses(self, job_id: int, stop: threading.Event | None = None) -> Iterator[JobStatus]:
        """Every status of the job until it ends: its event stream, reopened when it drops,
        the status read between streams, polling instead after STREAM_FAILURES empty streams;
        a coordinator that stays unreachable for ``reconnect`` seconds raises."""
        r = _core.Reconnect(self.reconnect)
        while stop is None or not stop.is_set():
            if r.streaming:
                seen = 0
                try:
                    for st in self.events(job_id):
                        seen += 1
                        r.reached()
                        yield st
                        if st.ended:
                            return
                except (CoordinatorUnreachable, ServerError):
                    # Dropped, or refused for now (the cap on open streams): read the status.
                    pass
                r.stream_closed(seen)
            try:
                st = self.status(job_id)
            except CoordinatorUnreachable:
                if r.gave_up():
                    raise
            else:
                r.reached()
                yield st
                if st.ended:
                    return
            time.sleep(r.pause())

    def follow(
        self,
        job_id: int,
        *,
        progress: ProgressArg = True,
        timeout: float | None = None,
    ) -> JobStatus:
        """Follows the job over its event stream until it ends and returns its final status
        (``done``, ``failed`` or ``cancelled``: nothing is raised for those).

        ``progress``: ``True`` shows a tqdm bar with the figure that matters for the job's
        kind (probes and bounds, playouts, runs, moves, ...); a function is called with each
        new status. ``timeout`` (seconds) raises :class:`WaitTimeout` when the job has not
        ended by then (the job goes on); a coordinator that stops answering raises
        :class:`CoordinatorUnreachable` after ``reconnect`` seconds.
        """
        f = _core.Follower(job_id, progress)
        try:
            if timeout is None:
                for st in self._statuses(job_id):
                    f.see(st)
                    if st.ended:
                        return st
                raise GamesolverError(f"job {job_id}: following ended before the job")
            return self._follow_until(job_id, timeout, f)
        finally:
            f.close()

    def _follow_until(self, job_id: int, timeout: float, f: _core.Follower) -> JobStatus:
        # A reader thread follows the stream; this thread waits on a queue with the deadline,
        # so the wait ends on time whatever the stream's read timeout.
        q: queue.Queue[JobStatus | BaseException | None] = queue.Queue()
        stop = threading.Event()

        def reader() -> None:
            try:
                for st in self._statuses(job_id, stop):
                    if stop.is_set():
                        return
                    q.put(st)
                    if st.ended:
                        return
                q.put(None)
            except BaseException as e:  # handed to the waiting thread
                q.put(e)

        t = threading.Thread(target=reader, name=f"gamesolver-follow-{job_id}", daemon=True)
        t.start()
        deadline = time.monotonic() + timeout
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise WaitTimeout(job_id, timeout, f.latest)
                try:
                    item = q.get(timeout=left)
                except queue.Empty:
                    raise WaitTimeout(job_id, timeout, f.latest) from None
                if isinstance(item, BaseException):
                    raise item
                if item is None:
                    raise GamesolverError(f"job {job_id}: following ended before the job")
                f.see(item)
                if item.ended:
                    return item
        finally:
            stop.set()

    def wait(
        self,
        job_id: int,
        timeout: float | None = None,
        *,
        progress: ProgressArg = False,
    ) -> Result:
        """Waits for the job's result (following its events) and returns it. Raises
        :class:`JobFailed` / :class:`JobCancelled` when it ended without one,
        :class:`WaitTimeout` after ``timeout`` seconds, :class:`CoordinatorUnreachable` when
        the coordinator stops answering."""
        return result_of(self.follow(job_id, progress=progress, timeout=timeout))

    def solve(
        self,
        game: str,
        position: str = "",
        *,
        algorithm: str,
        game_params: Mapping[str, Setting] | None = None,
        options: Mapping[str, Setting] | None = None,
        time_ms: int | None = None,
        node_limit: int | None = None,
        timeout: float | None = None,
        progress: ProgressArg = False,
    ) -> Result:
        """Submits a job and waits for its result: :meth:`submit` then :meth:`wait`."""
        job = self.submit(
            game, position, algorithm=algorithm, game_params=game_params, options=options,
            time_ms=time_ms, node_limit=node_limit,
        )
        return job.wait(timeout, progress=progress)

    def analyse(
        self,
        game: str,
        position: str = "",
        *,
        algorithm: str,
        game_params: Mapping[str, Setting] | None = None,
        options: Mapping[str, Setting] | None = None,
        time_ms: int | None = None,
        node_limit: int | None = None,
        timeout: float | None = None,
        progress: ProgressArg = False,
    ) -> Analysis:
        """Every legal move's score (option ``analyse=all``, as ``gamesolver analyse``):
        submits, waits and returns the :class:`Analysis`, best move first."""
        result = self.solve(
            game, position, algorithm=algorithm, game_params=game_params,
            options=_core.with_analysis(options), time_ms=time_ms, node_limit=node_limit,
            timeout=timeout, progress=progress,
        )
        job = JobSpec(game, algorithm, position, dict(game_params or {}), dict(options or {}))
        return self._analysis_of(result, job)

    def analysis(self, job_id: int) -> Analysis:
        """The analysis of an ended job (its result's ``moves``; empty without
        ``analyse=all``); raises :class:`JobFailed` when it has no result yet."""
        st = self.status(job_id)
        return self._analysis_of(result_of(st), st.job)

    def _analysis_of(self, result: Result, job: JobSpec | None) -> Analysis:
        """The analysis, each exact score with the game's words (``GET /v1/score-words``)."""
        words: dict[int, str] = {}
        if job is not None:
            req = _core.score_words_request(job, _core.exact_scores(result.raw.get("moves")))
            if req is not None:
                words = _core.read_score_words(self._call(req))
        return Analysis.from_result(result, job, words)

    def jobs(self, limit: int | None = None, before: int | None = None) -> JobPage:
        """One page of jobs, newest first (``limit`` at most 1000; ``before``: the previous
        page's ``next_before``)."""
        d = self._call(
            _core.Request("GET", "/v1/jobs", params=_core.page_params(limit, "before", before))
        )
        return _core.read_job_page(d)

    def iter_jobs(self, page_size: int = 100) -> Iterator[JobSummary]:
        """Every job, newest first, page by page."""
        before: int | None = None
        while True:
            page = self.jobs(page_size, before)
            yield from page.jobs
            if page.next_before is None:
                return
            before = page.next_before

    def tasks(self, job_id: int, limit: int | None = None, after: int | None = None) -> TaskPage:
        """One page of the job's tasks, by id (``after``: the previous page's ``next_after``)."""
        d = self._call(
            _core.Request(
                "GET", _core.job_path(job_id, "/tasks"),
                params=_core.page_params(limit, "after", after),
            )
        )
        return _core.read_task_page(d)

    def iter_tasks(self, job_id: int, page_size: int = 100) -> Iterator[TaskInfo]:
        """Every task of the job, by id, page by page."""
        after: int | None = None
        while True:
            page = self.tasks(job_id, page_size, after)
            yield from page.tasks
            if page.next_after is None:
                return
            after = page.next_after

    def proof(self, job_id: int) -> dict[str, Any]:
        """The job's proof certificate (proof-number jobs with options ``target`` and
        ``proof=true``, once done); :class:`NotFound` when it has none. ``gamesolver
        verify-proof FILE`` checks it with the game rules alone."""
        d = self._call(_core.Request("GET", _core.job_path(job_id, "/proof")))
        if not isinstance(d, dict):
            raise GamesolverError(f"job {job_id}: the proof certificate is not a JSON object")
        return d

    def save_proof(self, job_id: int, path: str | Path) -> Path:
        """Writes the job's proof certificate to ``path`` (the file ``verify-proof`` reads)."""
        p = Path(path)
        p.write_text(json.dumps(self.proof(job_id)), encoding="utf-8")
        return p

    # -- specs, pictures, service -------------------------------------------------------------

    def options(self, game: str, algorithm: str) -> list[OptionSpec]:
        """The options and game parameters a job of ``algorithm`` on ``game`` accepts, with
        type, bounds, default and meaning (``GET /v1/options``); :class:`NotFound` when the
        registry does not run the pair."""
        d = self._call(
            _core.Request("GET", "/v1/options", params={"game": game, "algorithm": algorithm})
        )
        return _core.read_options(d)

    def board(self, game: str, position: str = "", **game_params: Setting) -> Svg | None:
        """A picture of a position (``GET /v1/board.svg``); Jupyter shows it. ``None`` when
        the game has no pictures; :class:`BadRequest` for a bad position or parameter."""
        q = _core.board_params(game, position, game_params)
        return _core.read_svg(self._send(_core.Request("GET", "/v1/board.svg", params=q)))

    def job_board(self, job_id: int) -> Svg | None:
        """A picture of the job's position (``None`` when its game has no pictures)."""
        return _core.read_svg(self._send(_core.Request("GET", _core.job_path(job_id, "/board.svg"))))

    def plot(self, job_id: int) -> Svg:
        """The job's progress chart (bounds, best score, MCTS visits or work done)."""
        svg = _core.read_svg(self._send(_core.Request("GET", _core.job_path(job_id, "/plot.svg"))))
        if svg is None:
            raise GamesolverError(f"job {job_id}: the coordinator sent no chart")
        return svg

    def service_status(self) -> dict[str, Any]:
        """``GET /v1/status``: workers, queue depth, jobs by state, throughput."""
        d = self._call(_core.Request("GET", "/v1/status"))
        return dict(d)

    def healthy(self) -> bool:
        """Whether the coordinator answers ``/healthz`` (never raises)."""
        try:
            return self._send(_core.Request("GET", "/healthz")).status_code == 200
        except CoordinatorUnreachable:
            return False

    def openapi(self) -> dict[str, Any]:
        """The coordinator's OpenAPI document (``GET /openapi.json``)."""
        return dict(self._call(_core.Request("GET", "/openapi.json")))


class Job:
    """A handle on one job of a :class:`Client`: ``id`` and the calls about it."""

    def __init__(self, client: Client, job_id: int) -> None:
        self.client = client
        self.id = job_id

    def __repr__(self) -> str:
        return f"Job({self.id}, {self.client.url!r})"

    def status(self) -> JobStatus:
        """See :meth:`Client.status`."""
        return self.client.status(self.id)

    def events(self) -> Iterator[JobStatus]:
        """See :meth:`Client.events`."""
        return self.client.events(self.id)

    def follow(self, *, progress: ProgressArg = True, timeout: float | None = None) -> JobStatus:
        """See :meth:`Client.follow`."""
        return self.client.follow(self.id, progress=progress, timeout=timeout)

    def wait(self, timeout: float | None = None, *, progress: ProgressArg = False) -> Result:
        """See :meth:`Client.wait`."""
        return self.client.wait(self.id, timeout, progress=progress)

    def cancel(self) -> JobStatus:
        """See :meth:`Client.cancel`."""
        return self.client.cancel(self.id)

    def analysis(self) -> Analysis:
        """See :meth:`Client.analysis`."""
        return self.client.analysis(self.id)

    def tasks(self, limit: int | None = None, after: int | None = None) -> TaskPage:
        """See :meth:`Client.tasks`."""
        return self.client.tasks(self.id, limit, after)

    def iter_tasks(self, page_size: int = 100) -> Iterator[TaskInfo]:
        """See :meth:`Client.iter_tasks`."""
        return self.client.iter_tasks(self.id, page_size)

    def proof(self) -> dict[str, Any]:
        """See :meth:`Client.proof`."""
        return self.client.proof(self.id)

    def save_proof(self, path: str | Path) -> Path:
        """See :meth:`Client.save_proof`."""
        return self.client.save_proof(self.id, path)

    def board(self) -> Svg | None:
        """See :meth:`Client.job_board`."""
        return self.client.job_board(self.id)

    def plot(self) -> Svg:
        """See :meth:`Client.plot`."""
        return self.client.plot(self.id)
