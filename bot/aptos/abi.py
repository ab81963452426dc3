"""Function signatures from a module's ABI (the node's `GET /v1/accounts/{a}/module/{m}` JSON).

`ModuleAbi.from_json` accepts the bare `abi` object or the `{bytecode, abi}` wrapper; each
`FunctionAbi` parses its parameter types once, so encoding many calls of one function does
no parsing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeAlias

from bot.aptos.address import Address, AddressError, FunctionId
from bot.aptos.movetypes import MoveType, Signer, has_generics, parse_move_type

__all__ = ["AbiError", "AbiSource", "FunctionAbi", "ModuleAbi", "resolve_function"]


class AbiError(ValueError):
    """An ABI that is malformed, or does not have (or fit) the function asked for."""


class FunctionAbi:
    """One exposed function of a module ABI, with its parameter types parsed once."""

    __slots__ = (
        "arg_has_generics",
        "arg_types",
        "function_id",
        "is_entry",
        "params",
        "type_params",
    )

    def __init__(
        self,
        function_id: FunctionId,
        params: Sequence[MoveType],
        type_params: int,
        is_entry: bool = True,
    ) -> None:
        self.function_id = function_id
        self.params: tuple[MoveType, ...] = tuple(params)
        self.type_params = type_params
        self.is_entry = is_entry
        leading = 0
        while leading < len(self.params) and isinstance(self.params[leading], Signer):
            leading += 1
        # Only the *leading* signers are supplied by the VM; `Option<signer>` etc. stay.
        self.arg_types: tuple[MoveType, ...] = self.params[leading:]
        self.arg_has_generics = tuple(has_generics(t) for t in self.arg_types)

    @classmethod
    def from_json(cls, address: Address, module: str, function: Mapping[str, Any]) -> FunctionAbi:
        """Build from one entry of the node's `exposed_functions`.

        Raises:
            AbiError: naming the function, for a missing field or an unparsable parameter type.
        """
        try:
            name = function["name"]
            function_id = FunctionId(address, module, name)
            params = [parse_move_type(p) for p in function["params"]]
            generic_count = len(function.get("generic_type_params", ()))
        except (KeyError, TypeError, ValueError) as exc:
            raise AbiError(f"bad ABI for {address}::{module}::{function!r:.80}: {exc}") from exc
        return cls(function_id, params, generic_count, bool(function.get("is_entry", False)))

    @property
    def name(self) -> str:
        """The function's name."""
        return self.function_id.function

    def __repr__(self) -> str:
        return f"FunctionAbi({self.function_id})"


class ModuleAbi:
    """A module ABI as `GET /v1/accounts/{addr}/module/{name}` returns it (`abi` field)."""

    __slots__ = ("_functions", "_parsed", "address", "name")

    def __init__(self, address: Address, name: str, functions: Sequence[Mapping[str, Any]]):
        self.address = address
        self.name = name
        self._functions = {f["name"]: f for f in functions}
        self._parsed: dict[str, FunctionAbi] = {}

    @classmethod
    def from_json(cls, module: Mapping[str, Any]) -> ModuleAbi:
        """Accept the bare `abi` object or the `{bytecode, abi}` wrapper.

        Raises:
            AbiError: when the JSON lacks `address`, `name` or `exposed_functions`.
        """
        inner = module.get("abi")
        abi: Mapping[str, Any] = inner if isinstance(inner, Mapping) else module
        try:
            address = Address.parse(abi["address"])
            name = abi["name"]
            functions = list(abi["exposed_functions"])
            if not isinstance(name, str) or not all(
                isinstance(f, Mapping) and isinstance(f.get("name"), str) for f in functions
            ):
                raise TypeError("module name or function names are not strings")
        except (KeyError, TypeError, AddressError) as exc:
            raise AbiError(f"not a module ABI: {exc}") from exc
        return cls(address, name, functions)

    @property
    def function_names(self) -> list[str]:
        """Names of all exposed functions."""
        return list(self._functions)

    def function(self, name: str) -> FunctionAbi:
        """The parsed ABI of one function (parsed on first use, then cached).

        Raises:
            AbiError: when the module has no such function or its ABI is malformed.
        """
        parsed = self._parsed.get(name)
        if parsed is None:
            raw = self._functions.get(name)
            if raw is None:
                raise AbiError(f"module {self.address}::{self.name} has no function {name!r}")
            parsed = FunctionAbi.from_json(self.address, self.name, raw)
            self._parsed[name] = parsed
        return parsed


AbiSource: TypeAlias = (
    FunctionAbi | ModuleAbi | Mapping[str, Any] | Sequence[ModuleAbi | Mapping[str, Any]]
)


def resolve_function(abi: AbiSource, function: str | FunctionId) -> FunctionAbi:
    """Find a function's ABI.

    Args:
        abi: a `FunctionAbi`, a `ModuleAbi`, a module's JSON (bare or `{bytecode, abi}`), or a
            list of those (e.g. every module of an account).
        function: `0x…::module::name` or a bare function name.

    Raises:
        AbiError: when the function is not there, or belongs to another module.
    """
    wanted = function if isinstance(function, FunctionId) else None
    if wanted is None and isinstance(function, str) and "::" in function:
        try:
            wanted = FunctionId.parse(function)
        except AddressError as exc:
            raise AbiError(str(exc)) from exc
    name = wanted.function if wanted is not None else str(function)
    if isinstance(abi, FunctionAbi):
        if abi.name != name or (wanted is not None and wanted != abi.function_id):
            raise AbiError(f"ABI is for {abi.function_id}, not {function}")
        return abi
    modules = _modules_of(abi)
    matches = [
        m
        for m in modules
        if (wanted is None or (m.address == wanted.address and m.name == wanted.module))
        and name in m.function_names
    ]
    if len(matches) != 1:
        why = "no" if not matches else "more than one"
        raise AbiError(f"{why} module in the ABI has function {function}")
    return matches[0].function(name)


def _modules_of(abi: AbiSource) -> list[ModuleAbi]:
    if isinstance(abi, ModuleAbi):
        return [abi]
    if isinstance(abi, Mapping):
        return [ModuleAbi.from_json(abi)]
    if isinstance(abi, list | tuple):
        return [m if isinstance(m, ModuleAbi) else ModuleAbi.from_json(m) for m in abi]
    raise AbiError(f"not an ABI: {type(abi).__name__}")
