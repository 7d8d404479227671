"""Start-up of the command (issue 14, item 4): the cyclic garbage collector stays out
of the way while modules load, and typer coerces plain values without pydantic.

Loading the auditor creates a few hundred thousand objects (modules, classes,
functions, Polars' and typer's tables) that live until the process ends.  The
collector counts them as new allocations and runs while they load: a full collection
in the middle of the imports of ``audit`` took 72 ms and freed nothing (measured on
the 2.8 MB Claude Code transcript of ``benchmarks/startup.py``).  :func:`loading`
pauses it around a block of imports, then moves everything alive into the permanent
generation (``gc.freeze``), so later collections do not scan it again.

Only in the command's own process (:func:`as_command`, called by
:func:`compaction_audit.__main__.run`): a program or test that calls the commands in
its own process keeps its collector as it is (a freeze there would keep its garbage
forever).

:func:`light_coercion` (installed when :mod:`compaction_audit.cli` loads) keeps
typer 0.29 from importing pydantic and building an adapter per option when the values
given need no conversion; the values and errors are typer's own.
"""

from __future__ import annotations

import gc
import importlib
import importlib.util
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import Any, get_args

_command: list[bool] = []


def as_command() -> None:
    """This process is the ``compaction-audit`` command: :func:`loading` acts, and
    the modules of :data:`DEFERRED` load when first used (:func:`defer`)."""
    _command.append(True)
    for name in DEFERRED:
        defer(name)


DEFERRED = ("importlib.metadata", "hashlib", "socket")
"""Modules imported at start-up by a dependency that no command uses: Polars imports
``importlib.metadata`` (and with it ``email``, ``zipfile``, ``csv``) for its Iceberg
reader only, about 10 % of ``import polars`` (15-40 ms of CPU on the machine of
docs/performance.md; issue 14, item 4); ``hashlib`` (OpenSSL's module, 3.4 ms) and
``socket`` (4.6 ms; best of 7, 2026-12-01) are imported by Polars' modules and by
``cosine.embed`` but used only in functions that an audit of a local trace does not
call (a long value's hash, the model's checksum in a process that loads it)."""


class _Deferred(ModuleType):
    """A module in ``sys.modules`` that imports the real one on first attribute use
    (:func:`defer`); the import system itself reads only ``__spec__`` and ``__name__``,
    which it has."""

    def __getattr__(self, attr: str) -> Any:
        name = self.__name__
        if sys.modules.get(name) is self:
            del sys.modules[name]
        real = importlib.import_module(name)  # sets the parent package's attribute too
        return getattr(real, attr)


def defer(name: str) -> bool:
    """Put a :class:`_Deferred` stand-in for the module ``name`` (of a package that is
    already loaded) in ``sys.modules``, unless it is loaded already: ``import name``
    then costs nothing, and the first attribute read (``name.version``, ``from name
    import x``) imports the real module, which every later import gets.  Only in the
    command's own process (:func:`as_command`).  Returns True when deferred."""
    parent, _, child = name.rpartition(".")
    if name in sys.modules or (parent and parent not in sys.modules):
        return False  # (find_spec would import the parent)
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return False
    if spec is None:
        return False
    stub = _Deferred(name)
    stub.__spec__ = spec
    if spec.submodule_search_locations is not None:  # a package: its submodules load
        stub.__path__ = list(spec.submodule_search_locations)  # without it, then once
    sys.modules[name] = stub
    if parent:
        setattr(sys.modules[parent], child, stub)
    return True


@contextmanager
def loading() -> Iterator[None]:
    """Around imports: the collector paused, then what is alive frozen and the collector
    resumed (module docstring).  Does nothing outside the command, or when the collector
    is already off."""
    if not _command or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()


def one_trace() -> bool:
    """Before the command audits one trace in its own process: switch the cyclic
    collector off until the process ends (True), when this is the command's process
    and the collector is on.

    The audit pauses the collector around its allocation-heavy stages
    (:func:`compaction_audit.io.quiet_gc.paused_gc`) and nothing it builds forms
    cycles; switching it back on between stages made the next allocation scan every
    object made in the pause: 0.12-0.15 s of the 254 MB 10,000 x 2,000 text cell of
    the benchmark grid (issue 14), for a few hundred objects freed (the ones it would
    have left to the end of the process).  Only for one trace: a run of many in this
    process (``--jobs 1``) would keep each trace's few cyclic objects until the end."""
    if not _command or not gc.isenabled():
        return False
    gc.disable()
    return True


_AS_TYPER = object()
""":func:`_as_is`'s answer when the value needs typer's own coercion."""


def light_coercion() -> bool:
    """Let typer coerce the values that need no conversion without pydantic (issue 14,
    item 4); returns True when installed (typer 0.29 and later), False otherwise.

    typer 0.29 coerces each parameter's value through a pydantic ``TypeAdapter`` that
    it builds the first time the parameter is processed, even when the value is None:
    it imports pydantic and built one adapter per option of ``audit`` (14), about 0.1 s
    of the command's start-up.  Here ``typer.core.build_runtime_param`` returns a
    runtime parameter that answers alone where the answer is plain (None: typer's
    own check before any adapter; a ``str`` parameter given a ``str``; a ``list[str]``
    given strings; an Enum or Literal choice, through typer's own
    ``coerce_cli_choice``; a parameter with a ``parser``, such as ``-o FILE``: what the
    parser returns, where typer's adapter imported pydantic and ``importlib.metadata``
    to call it, 0.1-0.15 s of CPU), with what typer's adapter would return, and otherwise
    builds typer's runtime parameter and hands it the value (paths, numbers, a choice
    that does not match: the same value or the same error as typer's).
    ``tests/test_startup_coercion.py`` compares both on every parameter of every
    command.  Does nothing with a typer that has no such hook (before 0.29 it used no
    pydantic)."""
    try:
        from dataclasses import dataclass, field

        from typer import _coercion, core
        from typer._param_types import coerce_cli_choice
    except ImportError:
        return False
    build = getattr(core, "build_runtime_param", None)
    base = getattr(_coercion, "RuntimeParam", None)
    if build is None or base is None or getattr(build, "light", False):
        return build is not None and base is not None
    typer_build: Any = build

    @dataclass(frozen=True)
    class Light(base):  # type: ignore[misc, valid-type]
        descriptor: Any = None
        real: list[Any] = field(default_factory=list)

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            got = _as_is(self.descriptor, value, ctx, coerce_cli_choice)
            if got is not _AS_TYPER:
                return got
            if not self.real:
                self.real.append(typer_build(self.descriptor))
            return self.real[0]._coerce_value(value, param=param, ctx=ctx)

    def light(descriptor: Any) -> Any:
        if descriptor.file_annotation is not None:
            return typer_build(descriptor)
        return Light(parameter_info=descriptor.parameter_info,
                     annotation=descriptor.annotation, descriptor=descriptor)

    light.light = True  # type: ignore[attr-defined]
    setattr(core, "build_runtime_param", light)  # noqa: B010 - typer's name, not typed
    return True


def _as_is(descriptor: Any, value: Any, ctx: Any, coerce_choice: Any) -> Any:
    """What typer's adapter returns for ``value`` when that needs no pydantic, else
    :data:`_AS_TYPER` (see :func:`light_coercion`)."""
    try:
        info, annotation = descriptor.parameter_info, descriptor.annotation
        is_list, choices = descriptor.is_list, descriptor.choices
        case_sensitive = descriptor.case_sensitive
    except AttributeError:  # another typer's descriptor: typer decides
        return _AS_TYPER
    if getattr(info, "click_type", None):
        return _AS_TYPER
    parser = getattr(info, "parser", None)
    if parser is not None:  # typer's adapter: parser(value), its ValueError a message
        if is_list or getattr(descriptor, "is_tuple", True):
            return _AS_TYPER
        try:
            return parser(value)  # (-o FILE: output_path, issue 14 item 4)
        except (ValueError, AssertionError):  # typer's adapter words it (and calls
            return _AS_TYPER  # the parser again: ours have no side effect before)
    if annotation is str and type(value) is str:
        return value  # typer's _parse_cli_str: str(value), the same string
    if is_list:
        if get_args(annotation) == (str,) and isinstance(value, list | tuple) \
                and all(type(v) is str for v in value):
            return list(value)  # typer's parse_list: a new list of the same strings
        return _AS_TYPER
    if choices is not None:
        try:
            return coerce_choice(value, choices=choices, case_sensitive=case_sensitive,
                                 ctx=ctx)
        except Exception:  # typer says why, through its adapter
            return _AS_TYPER
    return _AS_TYPER


def embed_early(paths: list[str]) -> bool:
    """In the command's own process, start the embedding helper process before the
    auditor's modules load, when ``paths`` is one trace that looks as if it carries
    texts (:func:`compaction_audit.cosine.server.start_early`; issue 14, item 4, and
    issue 16, point 4): the model loads on the other core while this process imports
    Polars and reads the log.  The helper's module is loaded by file path, so that the
    ``cosine`` package (and with it Polars) is not imported for it; the package finds
    it in ``sys.modules`` later.  Returns True when a helper was started."""
    if not _command:
        return False
    module = _server()
    return module is not None and bool(module.start_early(paths))


def text_early(paths: list[str]) -> bool:
    """In the command's own process, start the recall analysis's text helper before
    the auditor's modules load, at a lower priority, when ``paths`` is one trace that
    looks as if it carries texts (:func:`compaction_audit.cosine.server.texted_file`;
    :mod:`compaction_audit.recall.textearly`, issue 14, item 4): its interpreter and
    regular expressions load on the other core while this process imports Polars and
    reads the log.  Every audit of a trace with texts runs the analysis (its debt is
    in the report's series), whatever the rules selected.  Loads the text modules
    (``extract``, ``survival``: the audit needs them anyway).  Returns True when a
    helper was started."""
    if not _command:
        return False
    module = _server()
    if module is None or not module.texted_file(paths):
        return False
    from compaction_audit.recall import textearly

    return textearly.start_early()


def _server() -> Any:
    """:mod:`compaction_audit.cosine.server`, loaded by file path (see
    :func:`embed_early`); None when it cannot be."""
    import sys

    name = "compaction_audit.cosine.server"
    module = sys.modules.get(name)
    if module is None:
        import importlib.util
        import os

        package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        here = os.path.join(package, "cosine", "server.py")
        spec = importlib.util.spec_from_file_location(name, here)
        if spec is None or spec.loader is None:
            return None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except Exception:
            del sys.modules[name]
            return None
    return module
