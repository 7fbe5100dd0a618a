"""Client-side checks of a job's options and game parameters against the declared specs.

The coordinator serves, per game and algorithm, every option and game parameter a job accepts
with its type and bounds (``GET /v1/options``, from the same specs that check a job on the
server). Before a job is sent, :func:`check_settings` applies what those specs say: the name is
declared for the pair, the value has the declared type (a whole number, a number, ``true`` or
``false``) and lies within the declared bounds. Anything else (the position, bounds that depend
on another setting such as ``tasks`` at most ``trees``) is left to the server, whose 400 names
the problem. The checks follow the server's parsing: a whole number is decimal digits with an
optional ``+``, a number what Rust's ``f64`` parser reads, a boolean ``true`` or ``false``.
"""

from __future__ import annotations

import math
import re
from typing import Mapping, Sequence

from ._errors import InvalidJob
from ._types import OptionSpec, Setting

_UINT = re.compile(r"\+?[0-9]+")
_FLOAT = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[+-]?(?:inf|infinity|nan)", re.I)


def _text(v: Setting) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def _malformed(name: str, value: object, spec: OptionSpec) -> InvalidJob:
    """The error of a value that is not of the kind ``spec`` declares."""
    return InvalidJob(f"{name}={value!r} is malformed (expected {_expected(spec)})")


def _out_of_bounds(name: str, value: object, spec: OptionSpec) -> InvalidJob:
    """The error of a value outside the bounds ``spec`` declares."""
    return InvalidJob(f"{name}={value!r} is out of bounds ({_range(spec)})")


def _matched(value: str, pattern: re.Pattern[str], name: str, spec: OptionSpec) -> str:
    """``value`` stripped, when it is a number as ``pattern`` reads one; else the malformed error."""
    t = value.strip()
    if not pattern.fullmatch(t):
        raise _malformed(name, value, spec)
    return t


def _check_one(spec: OptionSpec, value: object, what: str) -> Setting:
    """``value`` checked against ``spec``; returns what to send (integral floats of whole-number
    settings become ints, as the server would refuse ``5.0``)."""
    name = f"{what} '{spec.name}'"
    if isinstance(value, bool):
        if spec.type in ("boolean", "string"):
            return value
        raise InvalidJob(f"{name} must be {_expected(spec)}, not {value!r}")
    if not isinstance(value, (str, int, float)):
        raise InvalidJob(
            f"{name} must be a string, number or boolean, not {type(value).__name__}"
        )
    if spec.type == "string":
        return value
    if spec.type == "boolean":
        if _text(value).strip() in ("true", "false"):
            return value
        raise InvalidJob(f"{name}={value!r} is malformed (expected true or false)")
    number: float | int
    if spec.type == "integer":
        if isinstance(value, float):
            if not (math.isfinite(value) and value.is_integer()):
                raise _malformed(name, value, spec)
            value = int(value)
        if isinstance(value, int):
            number = value
        else:
            number = int(_matched(value, _UINT, name, spec))
    else:  # number
        if isinstance(value, (int, float)):
            number = value
        else:
            number = float(_matched(value, _FLOAT, name, spec))
        if not math.isfinite(number):
            raise _out_of_bounds(name, value, spec)
    lo, hi = spec.minimum, spec.maximum
    if (lo is not None and number < lo) or (hi is not None and number > hi):
        raise _out_of_bounds(name, value, spec)
    return value


def _range(spec: OptionSpec) -> str:
    lo, hi = spec.minimum, spec.maximum
    if spec.type == "integer" and hi is not None and hi >= 2**64 - 1:
        return f"at least {lo:g}" if lo is not None else "a whole number"
    if lo is not None and hi is not None:
        return f"{lo:g} to {hi:g}"
    return "any"


def _expected(spec: OptionSpec) -> str:
    if spec.type == "integer":
        return f"a whole number, {_range(spec)}"
    if spec.type == "number":
        return f"a number, {_range(spec)}"
    if spec.type == "boolean":
        return "true or false"
    return "text"


def check_settings(
    game: str,
    algorithm: str,
    specs: Sequence[OptionSpec],
    options: Mapping[str, object],
    game_params: Mapping[str, object],
) -> tuple[dict[str, Setting], dict[str, Setting]]:
    """``options`` and ``game_params`` checked against ``specs`` (the answer of
    ``GET /v1/options`` for ``game`` and ``algorithm``): raises :class:`InvalidJob` naming the
    first problem, else returns the two maps as they are to be sent."""
    out: list[dict[str, Setting]] = []
    for settings, param, what in ((options, False, "option"), (game_params, True, "game parameter")):
        declared = {s.name: s for s in specs if s.param == param}
        checked: dict[str, Setting] = {}
        for key, value in settings.items():
            spec = declared.get(key)
            if spec is None:
                known = ", ".join(sorted(declared)) or "none"
                raise InvalidJob(
                    f"unknown {what} '{key}' for {algorithm} on {game} (known: {known})"
                )
            checked[key] = _check_one(spec, value, what)
        out.append(checked)
    return out[0], out[1]
