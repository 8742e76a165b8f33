"""Typed benchmark options: declared once as a dataclass, exposed as flags or `-O key=value`.

A benchmark's options carry their default, type, help and valid range in one place, so the CLI
shows only the chosen benchmark's flags, refuses out-of-range values with one line, and a
script can pass the same options generically. Nothing here knows argparse.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from dataclasses import dataclass, field
from typing import Any

from mindprobe.errors import UsageError


def option(
    default: Any = None,
    help: str = "",  # noqa: A002 (the natural name for it)
    *,
    choices: list[str] | None = None,
    minimum: float | None = None,
    maximum: float | None = None,
    metavar: str | None = None,
    list_sep: str | None = None,
    needs: str | tuple[str, tuple[Any, ...]] | None = None,
) -> Any:
    """A dataclass field with CLI metadata (help, choices, range). `needs` names the option
    without which this one does nothing (a boolean that must be on, or (name, values) that
    it must take): given without it, this one is refused, not ignored."""
    meta = {"help": help, "choices": choices, "minimum": minimum, "maximum": maximum,
            "metavar": metavar, "list_sep": list_sep, "needs": needs}
    return field(default=default, metadata=meta)


@dataclass(frozen=True)
class OptionSpec:
    name: str
    flag: str
    kind: type
    optional: bool
    default: Any
    help: str
    choices: list[str] | None
    minimum: float | None
    maximum: float | None
    metavar: str | None
    needs: str | tuple[str, tuple[Any, ...]] | None = None


@dataclass
class NoOptions:
    """A benchmark without options of its own."""


def _kind(annotation: Any) -> tuple[type, bool]:
    """(base type, allows None) of a field annotation such as `int | None`."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return args[0], True
    return annotation, False


def option_specs(cls: type) -> list[OptionSpec]:
    hints = typing.get_type_hints(cls)
    out = []
    for f in dataclasses.fields(cls):
        kind, optional = _kind(hints[f.name])
        m = f.metadata
        out.append(OptionSpec(
            name=f.name, flag="--" + f.name.replace("_", "-"), kind=kind, optional=optional,
            default=f.default, help=m.get("help", ""), choices=m.get("choices"),
            minimum=m.get("minimum"), maximum=m.get("maximum"), metavar=m.get("metavar"),
            needs=m.get("needs"),
        ))
    return out


def _convert(spec: OptionSpec, value: Any) -> Any:
    if value is None:
        if spec.optional or spec.default is None:
            return None
        raise UsageError(f"{spec.flag} needs a value")
    if spec.kind is bool:
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in ("1", "true", "yes", "on"):
            return True
        if text in ("0", "false", "no", "off"):
            return False
        raise UsageError(f"{spec.flag} expects true or false, got {value!r}")
    try:
        return spec.kind(value)
    except (TypeError, ValueError):
        raise UsageError(
            f"{spec.flag} expects {'a number' if spec.kind in (int, float) else spec.kind.__name__}"
            f", got {value!r}"
        ) from None


def _check(spec: OptionSpec, value: Any) -> None:
    if value is None:
        return
    if spec.choices and value not in spec.choices:
        raise UsageError(f"{spec.flag} must be one of {', '.join(spec.choices)}; got {value!r}")
    if spec.kind in (int, float):
        check_range(spec.flag, value, spec.minimum, spec.maximum)


def check_range(flag: str, value: float | None, minimum: float | None,
                maximum: float | None) -> None:
    """A number within [minimum, maximum]: one usage error naming the flag and its range
    otherwise (NaN and infinity are never in range)."""
    if value is None:
        return
    low = "" if minimum is None else _num(minimum)
    high = "" if maximum is None else _num(maximum)
    if not math.isfinite(value) or (minimum is not None and value < minimum) or (
            maximum is not None and value > maximum):
        span = (f"between {low} and {high}" if low and high else
                f"at least {low}" if low else f"at most {high}" if high else "a finite number")
        raise UsageError(f"{flag} must be {span}; got {value}")


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def parse_assignments(pairs: list[str] | None) -> dict[str, str]:
    """`["shots=3", "judge=random"]` -> {"shots": "3", "judge": "random"}."""
    out: dict[str, str] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"-O expects KEY=VALUE, got {pair!r}")
        out[key.strip().replace("-", "_")] = value
    return out


def typed_values(cls: type, values: dict[str, Any], *, benchmark: str = "") -> dict[str, Any]:
    """Raw values (flags or -O) converted and checked one by one, unknown keys refused: what
    a profile checks of the user's -O before its presets join them."""
    specs = {s.name: s for s in option_specs(cls)}
    unknown = sorted(set(values) - set(specs))
    if unknown:
        known = ", ".join(specs) or "none"
        where = f" of {benchmark}" if benchmark else ""
        raise UsageError(f"unknown option {unknown[0]!r}{where}; its options: {known}")
    kwargs = {}
    for name, spec in specs.items():
        if name in values:
            value = _convert(spec, values[name])
            _check(spec, value)
            kwargs[name] = value
    return kwargs


def build_options(cls: type, values: dict[str, Any], *, benchmark: str = "") -> Any:
    """An instance of `cls` from raw values (flags or -O); unknown keys and bad values refused."""
    specs = {s.name: s for s in option_specs(cls)}
    kwargs = typed_values(cls, values, benchmark=benchmark)
    for name, spec in specs.items():
        if spec.needs and kwargs.get(name) is not None:
            _check_needs(spec, specs, kwargs)
    return cls(**kwargs)


def _check_needs(spec: OptionSpec, specs: dict[str, OptionSpec], given: dict[str, Any]) -> None:
    other, values = spec.needs if isinstance(spec.needs, tuple) else (spec.needs, None)
    value = given.get(other, specs[other].default)
    if values is None and not value:
        raise UsageError(f"{spec.flag} only applies with {specs[other].flag}; add "
                         f"{specs[other].flag} or leave {spec.flag} out")
    if values is not None and value not in values:
        raise UsageError(f"{spec.flag} only applies with {specs[other].flag} "
                         f"{' or '.join(map(str, values))} (not {value}); leave it out")


def rebuild_options(cls: type, recorded: dict[str, Any] | None,
                    config: dict[str, Any] | None = None) -> Any:
    """The typed options of a recorded run: its manifest's `options`; for a manifest from
    before options were recorded, the same names in its `config` (older runs stay readable).
    Names the class no longer has are dropped; missing ones take their defaults. Values are
    the run's own (validated when it ran), so a range tightened since does not refuse it."""
    if not dataclasses.is_dataclass(cls):
        return NoOptions()
    names = {f.name for f in dataclasses.fields(cls) if f.init}
    values: dict[str, Any] = {}
    for source in (config, recorded):  # the recorded options win
        if isinstance(source, dict):
            values.update({k: v for k, v in source.items() if k in names})
    return cls(**values)


def options_dict(opts: Any) -> dict[str, Any]:
    return dataclasses.asdict(opts) if dataclasses.is_dataclass(opts) else {}
