"""A configuration to measure: the currency from a search space (or a study's record of what ran) to the
measurement backends, each of which renders it in its own terms (db_bench as flags, a program as an
OPTIONS file, another backend as it likes). Each setting names its option in every vocabulary the tool
knows, from the option catalogue or the space's own parameter, so that no layer between the space and the
backend translates names."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from search_spaces.catalogue import by_flag
from search_spaces.parameters import Parameter, flag_text

OPTIONS_FILE = "options_file"  # how a record of flags names the OPTIONS file a configuration starts from

OptionValue = bool | int | float | str


@dataclass(frozen=True)
class Setting:
    """One option's value and its names: the tool's (the catalogue's, or a space parameter's own), db_bench's
    flag, and the OPTIONS file's ``SECTION.key`` (None: a db_bench flag the tool knows no key of, as a
    user's ``--baseline`` file of flags may give one)."""

    name: str
    value: OptionValue
    flag: str
    options_key: str | None = None

    @classmethod
    def of(cls, param: Parameter, value: OptionValue) -> Setting:
        """``param``'s value, named by the catalogue's option where it is one, else by the parameter."""
        info = by_flag(param.flag)
        return cls(info.name if info else param.name, value, param.flag, param.options_key)


@dataclass(frozen=True)
class Config:
    """A configuration: its settings in order, and the OPTIONS file they apply over (a user's, given with
    ``--baseline FILE``; None: the defaults every run starts from)."""

    settings: tuple[Setting, ...] = ()
    options_file: str | None = None

    @classmethod
    def of(cls, values: Mapping[str, OptionValue | None], parameters: Iterable[Parameter] = ()) -> Config:
        """``values`` named as db_bench's flags (as a study records what ran, or a workload's hand-found
        configuration gives it) as a configuration: each named by the space's parameter of that flag, else by
        the catalogue's option, else kept as given (a None: not set), and typed by the parameter or the
        option's kind where that renders the same (db_bench's "4" as 4, but "10" of a float option, "9.9" of an
        int parameter or a choice the parameter lacks kept as given); ``options_file`` is the file they apply
        over."""
        declared = {p.flag: p for p in parameters}
        settings = []
        for flag, value in values.items():
            if flag == OPTIONS_FILE or value is None:
                continue
            if (param := declared.get(flag)) is not None:
                settings.append(Setting.of(param, _same(value, param.value_of(value))))
            elif (info := by_flag(flag)) is not None:
                settings.append(Setting(info.name, _same(value, _typed(info.kind, value)), flag, info.options_key))
            else:
                settings.append(Setting(flag, value, flag))
        given = values.get(OPTIONS_FILE)
        return cls(tuple(settings), None if given is None else str(given))

    def values(self) -> dict[str, OptionValue]:
        """Each setting's value by the tool's name of its option."""
        return {s.name: s.value for s in self.settings}

    def flags(self) -> dict[str, str]:
        """As a study records what ran (and db_bench takes it): the values as db_bench's flags take them
        (a bool as true or false), by the flags' names, after the ``options_file`` they apply over."""
        start = {} if self.options_file is None else {OPTIONS_FILE: self.options_file}
        return {**start, **{s.flag: flag_text(s.value) for s in self.settings}}


def _same(given: OptionValue, typed: OptionValue | None) -> OptionValue:
    """``typed`` where it renders as ``given`` does (what db_bench and an OPTIONS file get stays as given),
    else ``given``."""
    return typed if typed is not None and flag_text(typed) == flag_text(given) else given


def _typed(kind: str, value: OptionValue) -> OptionValue:
    """A recorded value (db_bench's text, e.g. "4" or "true") as the catalogue's ``kind`` of option holds it;
    itself when it is not one."""
    text = flag_text(value)
    if kind == "bool" and text in ("true", "false"):
        return text == "true"
    for kind_of, parse in (("int", int), ("float", float)):
        if kind == kind_of:
            try:
                return parse(text)
            except ValueError:
                return value
    return value
