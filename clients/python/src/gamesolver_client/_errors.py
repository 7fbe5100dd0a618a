"""The client's exceptions.

Every error the coordinator sends is ``{"error": {"code", "message"}}`` with a 4xx or 5xx status
(docs/API.md, section 6.1); it becomes an :class:`ApiError` (a subclass per common status) that
carries the status, the code and the message as the server wrote them. Problems found before
anything is sent (an option out of its declared bounds) are :class:`InvalidJob`; a coordinator
that cannot be reached is :class:`CoordinatorUnreachable`; a job that ended without a result is
:class:`JobFailed` (or :class:`JobCancelled`); a wait that ran out of time is :class:`WaitTimeout`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._types import JobStatus


class GamesolverError(Exception):
    """Base class of every error this client raises."""


class ApiError(GamesolverError):
    """The coordinator answered with an error: ``status`` (HTTP), ``code`` and ``message``."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message


class BadRequest(ApiError, ValueError):
    """400 ``bad_request``: an invalid job (the message names the problem) or a bad query."""


class Unauthorized(ApiError):
    """401 ``unauthorized``: missing or wrong API token (``GAMESOLVER_API_TOKEN``)."""


class NotFound(ApiError, LookupError):
    """404 ``not_found``: no such job (or removed by the retention policy), or nothing there."""


class Conflict(ApiError):
    """409 ``conflict``: e.g. cancelling a job that has already ended."""


class QuotaExceeded(ApiError):
    """429 ``quota``: a quota of the coordinator is full; the message names it."""


class ServerError(ApiError):
    """5xx: the coordinator failed (``store``, ``internal``, ``timeout``)."""


_BY_STATUS: dict[int, type[ApiError]] = {
    400: BadRequest,
    401: Unauthorized,
    404: NotFound,
    409: Conflict,
    429: QuotaExceeded,
}


def api_error(status: int, body: Any, text: str = "") -> ApiError:
    """The exception for an error answer: its JSON ``body`` when it has the usual shape, else
    the status and (the start of) the raw ``text``."""
    code, message = "error", text.strip()[:500] or "no message"
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        detail = body["error"]
        code = str(detail.get("code", code))
        message = str(detail.get("message", message))
    cls = _BY_STATUS.get(status, ServerError if status >= 500 else ApiError)
    return cls(status, code, message)


class InvalidJob(GamesolverError, ValueError):
    """The job breaks a rule the client checks before sending it: an option or game parameter
    the pair does not declare, of the wrong type, or outside its declared bounds."""


class CoordinatorUnreachable(GamesolverError, ConnectionError):
    """The coordinator could not be reached (refused, reset, timed out), after the retries the
    call allows."""


class JobFailed(GamesolverError):
    """The job ended ``failed`` (or ``cancelled``, see :class:`JobCancelled`): ``status`` is its
    final status and ``reason`` the coordinator's ``error``."""

    def __init__(self, status: JobStatus) -> None:
        self.status = status
        self.job_id = status.id
        self.reason = status.error or "no reason given"
        super().__init__(f"job {status.id} {status.state}: {self.reason}")


class JobCancelled(JobFailed):
    """The job was cancelled."""


class WaitTimeout(GamesolverError, TimeoutError):
    """The job had not ended when the wait's time ran out (it goes on running: cancel it or
    wait again). ``status`` is its latest status seen, when there was one."""

    def __init__(self, job_id: int, timeout: float, status: JobStatus | None) -> None:
        self.job_id = job_id
        self.status = status
        state = f" (still {status.state})" if status is not None else ""
        super().__init__(f"job {job_id} did not end within {timeout:g} s{state}")
