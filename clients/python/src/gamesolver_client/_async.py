"""The asynchronous client, for asyncio programs and notebooks: :class:`AsyncClient` and its
job handle :class:`AsyncJob`. The same calls as :class:`gamesolver_client.Client`, awaited;
requests and answers are built and read by the same code (:mod:`gamesolver_client._core`)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, AsyncIterator, Mapping

import httpx

from . import _core
from ._client import result_of
from ._errors import (
    CoordinatorUnreachable,
    GamesolverError,
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


class AsyncClient:
    """The asynchronous twin of :class:`gamesolver_client.Client` (same arguments, same
    defaults, the same environment variables). Use ``async with``, or ``await close()``."""

    def __init__(
        self,
        url: str | None = None,
        *,
        token: str | None = None,
        timeout: float = 30.0,
        check_options: bool = True,
        reconnect: float = _core.DEFAULT_RECONNECT,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.url = _core.resolve_url(url)
        self._token = _core.resolve_token(token)
        self.timeout = timeout
        self.check_options = check_options
        self.reconnect = reconnect
        self._http = httpx.AsyncClient(
            base_url=self.url,
            headers=_core.headers(self._token),
            timeout=_core.timeouts(timeout),
            transport=transport,
        )
        self._specs: dict[tuple[str, str], list[OptionSpec] | None] = {}

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Closes the client's connections."""
        await self._http.aclose()

    def __repr__(self) -> str:
        return f"AsyncClient({self.url!r})"

    async def _send(self, r: _core.Request) -> httpx.Response:
        try:
            return await self._http.request(r.method, r.path, params=r.params, json=r.body)
        except httpx.TransportError as e:
            raise _core.unreachable(self.url, e) from e

    async def _call(self, r: _core.Request) -> Any:
        return _core.decode(await self._send(r))

    async def submit(
        self,
        game: str,
        position: str = "",
        *,
        algorithm: str,
        game_params: Mapping[str, Setting] | None = None,
        options: Mapping[str, Setting] | None = None,
        time_ms: int | None = None,
        node_limit: int | None = None,
    ) -> AsyncJob:
        """See :meth:`gamesolver_client.Client.submit`."""
        spec = _core.job_spec(game, position, algorithm, game_params, options, time_ms, node_limit)
        return await self.submit_spec(spec)

    async def submit_spec(self, spec: JobSpec) -> AsyncJob:
        """See :meth:`gamesolver_client.Client.submit_spec`."""
        if self.check_options:
            specs = await self._declared(spec.game, spec.algorithm)
            if specs is not None:
                opts, params = check_settings(
                    spec.game, spec.algorithm, specs, spec.options, spec.game_params
                )
                spec = JobSpec(
                    spec.game, spec.algorithm, spec.position, params, opts,
                    spec.time_ms, spec.node_limit,
                )
        d = await self._call(_core.Request("POST", "/v1/jobs", body=spec.to_json()))
        return AsyncJob(self, int(d["id"]))

    async def _declared(self, game: str, algorithm: str) -> list[OptionSpec] | None:
        key = (game, algorithm)
        if key not in self._specs:
            try:
                self._specs[key] = await self.options(game, algorithm)
            except NotFound:
                self._specs[key] = None
        return self._specs[key]

    def job(self, job_id: int) -> AsyncJob:
        """The handle of job ``job_id`` (no request is made)."""
        _core.job_path(job_id)
        return AsyncJob(self, job_id)

    async def status(self, job_id: int) -> JobStatus:
        """See :meth:`gamesolver_client.Client.status`."""
        return _core.read_status(await self._call(_core.Request("GET", _core.job_path(job_id))))

    async def cancel(self, job_id: int) -> JobStatus:
        """See :meth:`gamesolver_client.Client.cancel`."""
        return _core.read_status(
            await self._call(_core.Request("POST", _core.job_path(job_id, "/cancel")))
        )

    async def events(self, job_id: int) -> AsyncIterator[JobStatus]:
        """See :meth:`gamesolver_client.Client.events`."""
        parser = SseParser()
        try:
            async with self._http.stream(
                "GET",
                _core.job_path(job_id, "/events"),
                headers={"Accept": "text/event-stream"},
                timeout=_core.stream_timeouts(self.timeout),
            ) as resp:
                if resp.status_code >= 400:
                    await resp.aread()
                    _core.check(resp)
                async for line in resp.aiter_lines():
                    st, last = _core.stream_status(parser, line)
                    if st is not None:
                        yield st
                        if last:
                            return
        except httpx.TransportError as e:
            raise _core.unreachable(self.url, e) from e

    async def _statuses(self, job_id: int) -> AsyncIterator[JobStatus]:
        # As Client._statuses.
        r = _core.Reconnect(self.reconnect)
        while True:
            if r.streaming:
                seen = 0
                try:
                    async for st in self.events(job_id):
                        seen += 1
                        r.reached()
                        yield st
                        if st.ended:
                            return
                except (CoordinatorUnreachable, ServerError):
                    pass
                r.stream_closed(seen)
            try:
                st = await self.status(job_id)
            except CoordinatorUnreachable:
                if r.gave_up():
                    raise
            else:
                r.reached()
                yield st
                if st.ended:
                    return
            await asyncio.sleep(r.pause())

    async def follow(
        self,
        job_id: int,
        *,
        progress: ProgressArg = True,
        timeout: float | None = None,
    ) -> JobStatus:
        """See :meth:`gamesolver_client.Client.follow`."""
        f = _core.Follower(job_id, progress)

        async def run() -> JobStatus:
            async for st in self._statuses(job_id):
                f.see(st)
                if st.ended:
                    return st
            raise GamesolverError(f"job {job_id}: following ended before the job")

        try:
            if timeout is None:
                return await run()
            try:
                return await asyncio.wait_for(run(), timeout)
            except asyncio.TimeoutError:
                raise WaitTimeout(job_id, timeout, f.latest) from None
        finally:
            f.close()

    async def wait(
        self,
        job_id: int,
        timeout: float | None = None,
        *,
        progress: ProgressArg = False,
    ) -> Result:
        """See :meth:`gamesolver_client.Client.wait`."""
        return result_of(await self.follow(job_id, progress=progress, timeout=timeout))

    async def solve(
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
        """See :meth:`gamesolver_client.Client.solve`."""
        job = await self.submit(
            game, position, algorithm=algorithm, game_params=game_params, options=options,
            time_ms=time_ms, node_limit=node_limit,
        )
        return await job.wait(timeout, progress=progress)

    async def analyse(
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
        """See :meth:`gamesolver_client.Client.analyse`."""
        result = await self.solve(
            game, position, algorithm=algorithm, game_params=game_params,
            options=_core.with_analysis(options), time_ms=time_ms, node_limit=node_limit,
            timeout=timeout, progress=progress,
        )
        job = JobSpec(game, algorithm, position, dict(game_params or {}), dict(options or {}))
        return await self._analysis_of(result, job)

    async def analysis(self, job_id: int) -> Analysis:
        """See :meth:`gamesolver_client.Client.analysis`."""
        st = await self.status(job_id)
        return await self._analysis_of(result_of(st), st.job)

    async def _analysis_of(self, result: Result, job: JobSpec | None) -> Analysis:
        """See :meth:`gamesolver_client.Client._analysis_of`."""
        words: dict[int, str] = {}
        if job is not None:
            req = _core.score_words_request(job, _core.exact_scores(result.raw.get("moves")))
            if req is not None:
                words = _core.read_score_words(await self._call(req))
        return Analysis.from_result(result, job, words)

    async def jobs(self, limit: int | None = None, before: int | None = None) -> JobPage:
        """See :meth:`gamesolver_client.Client.jobs`."""
        d = await self._call(
            _core.Request("GET", "/v1/jobs", params=_core.page_params(limit, "before", before))
        )
        return _core.read_job_page(d)

    async def iter_jobs(self, page_size: int = 100) -> AsyncIterator[JobSummary]:
        """See :meth:`gamesolver_client.Client.iter_jobs`."""
        before: int | None = None
        while True:
            page = await self.jobs(page_size, before)
            for j in page.jobs:
                yield j
            if page.next_before is None:
                return
            before = page.next_before

    async def tasks(
        self, job_id: int, limit: int | None = None, after: int | None = None
    ) -> TaskPage:
        """See :meth:`gamesolver_client.Client.tasks`."""
        d = await self._call(
            _core.Request(
                "GET", _core.job_path(job_id, "/tasks"),
                params=_core.page_params(limit, "after", after),
            )
        )
        return _core.read_task_page(d)

    async def iter_tasks(self, job_id: int, page_size: int = 100) -> AsyncIterator[TaskInfo]:
        """See :meth:`gamesolver_client.Client.iter_tasks`."""
        after: int | None = None
        while True:
            page = await self.tasks(job_id, page_size, after)
            for t in page.tasks:
                yield t
            if page.next_after is None:
                return
            after = page.next_after

    async def proof(self, job_id: int) -> dict[str, Any]:
        """See :meth:`gamesolver_client.Client.proof`."""
        d = await self._call(_core.Request("GET", _core.job_path(job_id, "/proof")))
        if not isinstance(d, dict):
            raise GamesolverError(f"job {job_id}: the proof certificate is not a JSON object")
        return d

    async def save_proof(self, job_id: int, path: str | Path) -> Path:
        """See :meth:`gamesolver_client.Client.save_proof`."""
        p = Path(path)
        p.write_text(json.dumps(await self.proof(job_id)), encoding="utf-8")
        return p

    async def options(self, game: str, algorithm: str) -> list[OptionSpec]:
        """See :meth:`gamesolver_client.Client.options`."""
        d = await self._call(
            _core.Request("GET", "/v1/options", params={"game": game, "algorithm": algorithm})
        )
        return _core.read_options(d)

    async def board(self, game: str, position: str = "", **game_params: Setting) -> Svg | None:
        """See :meth:`gamesolver_client.Client.board`."""
        q = _core.board_params(game, position, game_params)
        return _core.read_svg(await self._send(_core.Request("GET", "/v1/board.svg", params=q)))

    async def job_board(self, job_id: int) -> Svg | None:
        """See :meth:`gamesolver_client.Client.job_board`."""
        return _core.read_svg(
            await self._send(_core.Request("GET", _core.job_path(job_id, "/board.svg")))
        )

    async def plot(self, job_id: int) -> Svg:
        """See :meth:`gamesolver_client.Client.plot`."""
        svg = _core.read_svg(
            await self._send(_core.Request("GET", _core.job_path(job_id, "/plot.svg")))
        )
        if svg is None:
            raise GamesolverError(f"job {job_id}: the coordinator sent no chart")
        return svg

    async def service_status(self) -> dict[str, Any]:
        """See :meth:`gamesolver_client.Client.service_status`."""
        return dict(await self._call(_core.Request("GET", "/v1/status")))

    async def healthy(self) -> bool:
        """See :meth:`gamesolver_client.Client.healthy`."""
        try:
            return (await self._send(_core.Request("GET", "/healthz"))).status_code == 200
        except CoordinatorUnreachable:
            return False

    async def openapi(self) -> dict[str, Any]:
        """See :meth:`gamesolver_client.Client.openapi`."""
        return dict(await self._call(_core.Request("GET", "/openapi.json")))


class AsyncJob:
    """A handle on one job of an :class:`AsyncClient`."""

    def __init__(self, client: AsyncClient, job_id: int) -> None:
        self.client = client
        self.id = job_id

    def __repr__(self) -> str:
        return f"AsyncJob({self.id}, {self.client.url!r})"

    async def status(self) -> JobStatus:
        """See :meth:`gamesolver_client.Client.status`."""
        return await self.client.status(self.id)

    def events(self) -> AsyncIterator[JobStatus]:
        """See :meth:`gamesolver_client.Client.events`."""
        return self.client.events(self.id)

    async def follow(
        self, *, progress: ProgressArg = True, timeout: float | None = None
    ) -> JobStatus:
        """See :meth:`gamesolver_client.Client.follow`."""
        return await self.client.follow(self.id, progress=progress, timeout=timeout)

    async def wait(
        self, timeout: float | None = None, *, progress: ProgressArg = False
    ) -> Result:
        """See :meth:`gamesolver_client.Client.wait`."""
        return await self.client.wait(self.id, timeout, progress=progress)

    async def cancel(self) -> JobStatus:
        """See :meth:`gamesolver_client.Client.cancel`."""
        return await self.client.cancel(self.id)

    async def analysis(self) -> Analysis:
        """See :meth:`gamesolver_client.Client.analysis`."""
        return await self.client.analysis(self.id)

    async def tasks(self, limit: int | None = None, after: int | None = None) -> TaskPage:
        """See :meth:`gamesolver_client.Client.tasks`."""
        return await self.client.tasks(self.id, limit, after)

    def iter_tasks(self, page_size: int = 100) -> AsyncIterator[TaskInfo]:
        """See :meth:`gamesolver_client.Client.iter_tasks`."""
        return self.client.iter_tasks(self.id, page_size)

    async def proof(self) -> dict[str, Any]:
        """See :meth:`gamesolver_client.Client.proof`."""
        return await self.client.proof(self.id)

    async def save_proof(self, path: str | Path) -> Path:
        """See :meth:`gamesolver_client.Client.save_proof`."""
        return await self.client.save_proof(self.id, path)

    async def board(self) -> Svg | None:
        """See :meth:`gamesolver_client.Client.job_board`."""
        return await self.client.job_board(self.id)

    async def plot(self) -> Svg:
        """See :meth:`gamesolver_client.Client.plot`."""
        return await self.client.plot(self.id)
