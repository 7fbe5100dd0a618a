"""Server-Sent Events, as ``GET /v1/jobs/{id}/events`` sends them (docs/API.md, section 6.3).

Each event is ``event: status`` (or ``end``, the last) and one ``data:`` line holding the job's
whole status; comments (``: keep-alive``) and ``id:``/``retry:`` fields carry nothing here.
:class:`SseParser` is fed the stream's lines one at a time and returns an event when a blank
line ends one; it keeps no more than one event's data.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SseEvent:
    """One event: its type (``message`` when the stream names none) and its data."""

    event: str
    data: str


class SseParser:
    """Turns lines of an event stream into events."""

    def __init__(self) -> None:
        self._event = ""
        self._data: list[str] = []

    def feed(self, line: str) -> SseEvent | None:
        """Takes one line (without its end of line); returns the event it completes, if any."""
        line = line.rstrip("\r\n")
        if not line:
            if not self._data:
                self._event = ""
                return None
            ev = SseEvent(self._event or "message", "\n".join(self._data))
            self._event, self._data = "", []
            return ev
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "event":
            self._event = value
        elif name == "data":
            self._data.append(value)
        return None
