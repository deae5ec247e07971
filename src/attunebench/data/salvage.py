"""Rebuild a record the schema refuses from the parts of it that are valid, so the checks can
report the rules it also breaks (not only the schema error): an invalid optional field is left
at its default, nested records are salvaged in turn, an invalid required value gets a stand-in.
It returns the paths it replaced, so findings about values not the file's are left out.
"""

from __future__ import annotations

import types
import typing
from functools import cache
from typing import Annotated, Any, TypeVar, Union

from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic.fields import FieldInfo

Path = tuple[str | int, ...]
ModelT = TypeVar("ModelT", bound=BaseModel)

# Tried in order for a required value that is missing or invalid. A NUL character matches no
# id a file could use, so a stand-in id never satisfies (or clashes with) a real reference.
_STAND_INS: tuple[object, ...] = ("\x00", 0, (), {})


def _nested(annotation: object) -> tuple[type[BaseModel], bool] | None:
    """(record type, whether a tuple of them) for a field of `X`, `X | None` or `tuple[X, ...]`."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation, False
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        inner = _nested(args[0])
        return (inner[0], True) if inner is not None and not inner[1] else None
    if origin in (Union, types.UnionType):
        records = [a for a in args if a is not type(None)]
        if len(records) == 1:
            return _nested(records[0])
    return None


@cache
def _adapter(model: type[BaseModel], name: str) -> TypeAdapter[Any]:
    info: FieldInfo = model.model_fields[name]
    # The field's constraints (`ge=0`, lengths) live beside its annotation, not in it.
    annotated: Any = (
        Annotated[(info.annotation, *info.metadata)] if info.metadata else info.annotation
    )
    return TypeAdapter(annotated)


def _stand_in(model: type[BaseModel], name: str, raw: object) -> object:
    adapter = _adapter(model, name)
    literals = typing.get_args(model.model_fields[name].annotation)
    # A value with the right text but the wrong type (an id given as a number) keeps its text.
    own = (str(raw),) if isinstance(raw, str | int | float) and not isinstance(raw, bool) else ()
    for candidate in (*own, *_STAND_INS, *literals):
        try:
            return adapter.validate_python(candidate)
        except ValidationError:
            continue
    raise TypeError(f"no stand-in for {model.__name__}.{name}")  # a schema change missed here


def _before_validators(model: type[BaseModel], raw: dict[str, Any]) -> dict[str, Any]:
    """Apply the model's own before-validators (legacy field names), so keys match error paths."""
    for decorator in model.__pydantic_decorators__.model_validators.values():
        if decorator.info.mode == "before":
            raw = decorator.func(raw)
    return raw


def salvage(model: type[ModelT], raw: object, at: Path = ()) -> tuple[ModelT, set[Path]]:
    """The record with every invalid part dropped or stood in for, and the paths of those parts."""
    if not isinstance(raw, dict):
        blank, _ = salvage(model, {}, at)
        return blank, {at}
    raw = _before_validators(model, raw)
    try:
        return model.model_validate(raw), set()
    except ValidationError as error:
        bad = {str(e["loc"][0]) for e in error.errors() if e["loc"]}
    kept = {key: value for key, value in raw.items() if key not in bad}
    touched: set[Path] = set()
    for name in sorted(bad):
        where = (*at, name)
        if name not in model.model_fields:  # an unknown field: leaving it out is the repair
            touched.add(where)
            continue
        nested = _nested(model.model_fields[name].annotation)
        if nested is not None and isinstance(raw.get(name), dict | list):
            record, many = nested
            value = raw[name]
            if many and isinstance(value, list):
                parts = [salvage(record, item, (*where, i)) for i, item in enumerate(value)]
                kept[name] = tuple(part for part, _ in parts)
                touched.update(path for _, paths in parts for path in paths)
                continue
            if not many and isinstance(value, dict):
                kept[name], paths = salvage(record, value, where)
                touched |= paths
                continue
        touched.add(where)
        if not model.model_fields[name].is_required():
            continue
        if nested is not None and not nested[1]:
            kept[name], _ = salvage(nested[0], {}, where)
        else:
            kept[name] = _stand_in(model, name, raw.get(name))
    # Salvaged records go in as instances, which pydantic takes as they are.
    return model.model_validate(kept), touched


def under(path: Path, touched: set[Path]) -> bool:
    """Whether `path` is, or lies inside, one of the `touched` paths."""
    return any(path[: len(t)] == t for t in touched)
