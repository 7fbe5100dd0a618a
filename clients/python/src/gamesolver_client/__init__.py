"""Python client of the gamesolver HTTP service (docs/API.md, section 6).

>>> from gamesolver_client import Client
>>> client = Client()  # GAMESOLVER_URL or http://127.0.0.1:8080, token GAMESOLVER_API_TOKEN
>>> analysis = client.analyse("connect4", "335662333565", algorithm="alphabeta")
>>> for m in analysis.moves:
...     print(m.move, m)

:class:`Client` is synchronous, :class:`AsyncClient` its asyncio twin. Jobs are submitted with
the job JSON's fields, their options checked client-side against the specs the coordinator
declares; they are followed over Server-Sent Events (with a tqdm bar), waited for with a
timeout, cancelled, listed and paged; results, analyses (typed records, and a pandas DataFrame),
task pages, proof certificates and board pictures (SVG, shown in Jupyter) are read back.
Errors carry the server's code and message (:class:`ApiError`).
"""

from ._async import AsyncClient, AsyncJob
from ._client import Client, Job
from ._core import DEFAULT_URL
from ._errors import (
    ApiError,
    BadRequest,
    Conflict,
    CoordinatorUnreachable,
    GamesolverError,
    InvalidJob,
    JobCancelled,
    JobFailed,
    NotFound,
    QuotaExceeded,
    ServerError,
    Unauthorized,
    WaitTimeout,
)
from ._progress import Figure, figure
from ._types import (
    Analysis,
    JobPage,
    JobSpec,
    JobStatus,
    JobSummary,
    MoveScore,
    OptionSpec,
    Result,
    Setting,
    Svg,
    TaskCounts,
    TaskInfo,
    TaskPage,
    Value,
)

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_URL",
    "Analysis",
    "ApiError",
    "AsyncClient",
    "AsyncJob",
    "BadRequest",
    "Client",
    "Conflict",
    "CoordinatorUnreachable",
    "Figure",
    "GamesolverError",
    "InvalidJob",
    "Job",
    "JobCancelled",
    "JobFailed",
    "JobPage",
    "JobSpec",
    "JobStatus",
    "JobSummary",
    "MoveScore",
    "NotFound",
    "OptionSpec",
    "QuotaExceeded",
    "Result",
    "ServerError",
    "Setting",
    "Svg",
    "TaskCounts",
    "TaskInfo",
    "TaskPage",
    "Unauthorized",
    "Value",
    "WaitTimeout",
    "figure",
]
