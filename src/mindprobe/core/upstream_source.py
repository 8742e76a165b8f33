"""A benchmark's wording read from its upstream project's own files, never typed into ours.

Upstream prompt and solver files are official data (declared as `DataFile`s, fetched by
`mindprobe data fetch BENCH`, verified by hash on every load). This module reads the Python
ones without executing them (module `ast`): module-level string constants (a task description),
a function's literal parameter defaults (its sampling settings), and the f-strings a named
function builds (a prompt), whose literal parts are kept byte for
byte and whose `{expr}` parts become named slots. A slot is named after its expression's last
name (`data['question']` -> `question`, `sol_steps` -> `sol_steps`), and is rendered exactly as
Python renders an f-string field (conversion, then `format(value, spec)`), so a list is shown
as its repr where upstream shows it so.

`Template.braced()` / `Template.from_braced()` give the same template as a `str.format`-style
text (`{name}` slots, literal braces doubled), the form a `--prompt-file` uses.
"""

from __future__ import annotations

import ast
import string
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mindprobe.core.data import DataFile, resolve
from mindprobe.errors import DataError


@dataclass(frozen=True)
class Slot:
    """One `{expr}` field of an f-string: its name, upstream's expression text, conversion
    (`!s`, `!r`, `!a` or "") and format spec."""

    name: str
    expr: str = ""
    conversion: str = ""
    format_spec: str = ""

    def render(self, value: Any) -> str:
        if self.conversion == "r":
            value = repr(value)
        elif self.conversion == "a":
            value = ascii(value)
        elif self.conversion == "s":
            value = str(value)
        return format(value, self.format_spec)


@dataclass(frozen=True)
class Template:
    """Literal text and named slots, in order; `origin` says where it was read (file:line)."""

    parts: tuple[str | Slot, ...]
    origin: str = ""

    @property
    def slots(self) -> tuple[str, ...]:
        """The slot names, each once, in order of first appearance."""
        return tuple(dict.fromkeys(p.name for p in self.parts if isinstance(p, Slot)))

    @property
    def text(self) -> str:
        """The template with no slots as plain text (a constant)."""
        if self.slots:
            raise ValueError(f"{self.origin}: template has slots {', '.join(self.slots)}")
        return "".join(p for p in self.parts if isinstance(p, str))

    def render(self, values: Mapping[str, Any] | None = None, **kw: Any) -> str:
        """The text with every slot filled as Python fills an f-string field."""
        values = {**(values or {}), **kw}
        missing = [s for s in self.slots if s not in values]
        if missing:
            raise KeyError(f"{self.origin}: no value for slot(s) {', '.join(missing)}")
        return "".join(p if isinstance(p, str) else p.render(values[p.name]) for p in self.parts)

    def braced(self) -> str:
        """`str.format`-style text: `{name}` slots (conversion and spec kept), braces doubled."""
        out = []
        for p in self.parts:
            if isinstance(p, str):
                out.append(p.replace("{", "{{").replace("}", "}}"))
            else:
                conv = f"!{p.conversion}" if p.conversion else ""
                spec = f":{p.format_spec}" if p.format_spec else ""
                out.append("{" + p.name + conv + spec + "}")
        return "".join(out)

    @classmethod
    def from_braced(cls, text: str, origin: str = "") -> Template:
        """Parse `{name}` text (a prompt file's); positional or dotted fields are refused."""
        parts: list[str | Slot] = []
        try:
            fields = list(string.Formatter().parse(text))
        except ValueError as exc:
            raise DataError(f"{origin}: {exc} (write a literal brace as {{{{ or }}}})") from None
        for literal, name, spec, conv in fields:
            if literal:
                parts.append(literal)
            if name is None:
                continue
            if not name.isidentifier():
                raise DataError(f"{origin}: slot {{{name}}} is not a plain name; slots are "
                                "written {name} (write a literal brace as {{ or }})")
            parts.append(Slot(name, name, conv or "", spec or ""))
        return cls(tuple(_merge(parts)), origin)


def _merge(parts: Iterable[str | Slot]) -> list[str | Slot]:
    out: list[str | Slot] = []
    for p in parts:
        if isinstance(p, str) and out and isinstance(out[-1], str):
            out[-1] += p
        elif p != "":
            out.append(p)
    return out


@dataclass(frozen=True)
class Assigned:
    """A string or f-string a function assigns, with its target as upstream writes it."""

    target: str
    template: Template


class PythonSource:
    """One upstream Python file, parsed (never run); errors name the file and the fix."""

    def __init__(self, text: str, path: str | Path, fix: str = "") -> None:
        self.path, self.fix = str(path), fix
        try:
            self.tree = ast.parse(text, filename=self.path)
        except SyntaxError as exc:
            raise self.error(f"not valid Python ({exc.msg}, line {exc.lineno})") from None
        self.text = text

    @classmethod
    def official(cls, benchmark: str, files: list[DataFile], relpath: str,
                 data_dir: Path | None) -> PythonSource:
        """An upstream file of `benchmark`'s data folder (`data_dir`: the user's --data-dir,
        None for the data cache), verified against its pinned hash: missing or altered, it is
        one DataError naming the file and `mindprobe data fetch`."""
        path = resolve(benchmark, files, relpath, data_dir)
        return cls(path.read_text(encoding="utf-8"), path,
                   f"re-fetch it with `mindprobe data fetch {benchmark}`")

    def error(self, message: str) -> DataError:
        return DataError(f"{self.path}: {message}" + (f"; {self.fix}" if self.fix else ""))

    def constants(self, names: Iterable[str]) -> dict[str, str]:
        """Module-level `NAME = "..."` string constants, by name; a missing one is an error."""
        wanted = list(names)
        found: dict[str, str] = {}
        for node in self.tree.body:
            target, value = _assignment(node)
            if isinstance(target, ast.Name) and target.id in wanted:
                if not (isinstance(value, ast.Constant) and isinstance(value.value, str)):
                    raise self.error(f"{target.id} (line {node.lineno}) is not a string constant")
                found[target.id] = value.value
        missing = [n for n in wanted if n not in found]
        if missing:
            raise self.error(f"no string constant {', '.join(missing)} at module level")
        return found

    def literal(self, name: str) -> Any:
        """The module-level `NAME = ...` value, read as data: literals (dicts, lists, strings,
        numbers), where a call with only literal keyword arguments (upstream's
        `Message(role=..., content=...)`) reads as the dict of those arguments."""
        for node in self.tree.body:
            target, value = _assignment(node)
            if isinstance(target, ast.Name) and target.id == name and value is not None:
                try:
                    return _data(value)
                except ValueError as exc:
                    raise self.error(f"{name} (line {node.lineno}) is not data: {exc}") from None
        raise self.error(f"no assignment {name} at module level")

    def _function(self, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef:
        fn = next((n for n in ast.walk(self.tree)
                   if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == name),
                  None)
        if fn is None:
            raise self.error(f"no function {name}()")
        return fn

    def defaults(self, function: str) -> dict[str, Any]:
        """The literal default values of `function`'s parameters (its fixed settings), by name."""
        args = self._function(function).args
        out: dict[str, Any] = {}
        plain = [*args.posonlyargs, *args.args]
        pairs = [*zip(plain[len(plain) - len(args.defaults):], args.defaults, strict=True),
                 *((a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d)]
        for arg, default in pairs:
            try:
                out[arg.arg] = ast.literal_eval(default)
            except ValueError:
                continue  # not a literal (a name, a call): not a setting we can read
        return out

    def function_strings(self, function: str) -> list[Assigned]:
        """Every string or f-string assigned (`=`, `+=`) inside `function`, in source order."""
        fn = self._function(function)
        found = []
        for node in ast.walk(fn):
            target, value = _assignment(node)
            if target is None:
                continue
            if isinstance(value, ast.JoinedStr) or (
                    isinstance(value, ast.Constant) and isinstance(value.value, str)):
                origin = f"{self.path}:{node.lineno}"
                found.append(((node.lineno, node.col_offset),
                              Assigned(ast.unparse(target), self._template(value, origin))))
        return [a for _, a in sorted(found, key=lambda x: x[0])]

    def _template(self, node: ast.expr, origin: str) -> Template:
        if isinstance(node, ast.Constant):
            return Template((node.value,), origin)
        parts: list[str | Slot] = []
        exprs: dict[str, str] = {}
        for v in node.values:  # type: ignore[attr-defined]
            if isinstance(v, ast.Constant):
                parts.append(v.value)
                continue
            expr = ast.unparse(v.value)
            name = _slot_name(v.value)
            if exprs.setdefault(name, expr) != expr:
                raise self.error(f"line {node.lineno}: two fields would share the slot name "
                                 f"{name!r} ({exprs[name]}, {expr})")
            spec = ""
            if v.format_spec is not None:
                if not all(isinstance(s, ast.Constant) for s in v.format_spec.values):
                    raise self.error(f"line {node.lineno}: a computed format spec in {{{expr}}}")
                spec = "".join(s.value for s in v.format_spec.values)
            conv = chr(v.conversion) if v.conversion > 0 else ""
            parts.append(Slot(name, expr, conv, spec))
        return Template(tuple(_merge(parts)), origin)


def _data(node: ast.expr) -> Any:
    """A literal, or a call of literal keyword arguments as their dict (nested in lists)."""
    if isinstance(node, ast.List | ast.Tuple):
        return [_data(e) for e in node.elts]
    if isinstance(node, ast.Call):
        if node.args or any(k.arg is None for k in node.keywords):
            raise ValueError(f"line {node.lineno}: a call with positional arguments")
        return {k.arg: _data(k.value) for k in node.keywords}
    try:
        return ast.literal_eval(node)
    except ValueError:
        raise ValueError(f"line {node.lineno}: {ast.unparse(node)[:60]}") from None


def _assignment(node: ast.AST) -> tuple[ast.expr | None, ast.expr | None]:
    """(target, value) of a single-target assignment, else (None, None)."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        return node.targets[0], node.value
    if isinstance(node, ast.AugAssign | ast.AnnAssign) and node.value is not None:
        return node.target, node.value
    return None, None


def _slot_name(expr: ast.expr) -> str:
    """`x` -> x, `a['b']['c']` -> c, `a.b` -> b; anything else: its text made an identifier."""
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        return expr.attr
    if (isinstance(expr, ast.Subscript) and isinstance(expr.slice, ast.Constant)
            and isinstance(expr.slice.value, str) and expr.slice.value.isidentifier()):
        return expr.slice.value
    text = "".join(c if c.isalnum() else "_" for c in ast.unparse(expr)).strip("_")
    return text if text.isidentifier() else f"_{text}"
