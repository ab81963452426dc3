"""The dry-run report: a call decoded by its ABI, and its simulated effects; nothing signed.

Move ABIs carry parameter types but no parameter names, so arguments are shown by position
(`arg0`, counting after the leading signers), with their ABI type (generic parameters
substituted) and their canonical JSON value.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from aptos_sdk.transactions import EntryFunction

from bot.aptos.abi import FunctionAbi
from bot.aptos.codec import JsonValue, decode_entry_function
from bot.aptos.movetypes import parse_move_type, substitute
from bot.chain.records import SimulationResult

__all__ = ["ArgumentView", "DryRunReport", "build_report"]


@dataclass(frozen=True)
class ArgumentView:
    """One argument of the call: position, ABI type and canonical JSON value."""

    index: int
    move_type: str
    value: JsonValue

    @property
    def name(self) -> str:
        """`arg<index>` (the ABI has no parameter names)."""
        return f"arg{self.index}"


@dataclass(frozen=True)
class DryRunReport:
    """What a call would do. `notes` holds refusals and why nothing was simulated."""

    function: str
    type_arguments: tuple[str, ...]
    arguments: tuple[ArgumentView, ...]
    simulation: SimulationResult | None
    notes: tuple[str, ...]

    @property
    def refused(self) -> bool:
        """True when the policy, the chain id or the simulation would stop this call."""
        return any(
            n.startswith(("refused:", "simulation failed", "the node is on chain"))
            for n in self.notes
        )

    def as_json(self) -> dict[str, Any]:
        """JSON-ready form (amounts as text)."""
        sim = self.simulation
        return {
            "function": self.function,
            "type_arguments": list(self.type_arguments),
            "arguments": [
                {"name": a.name, "type": a.move_type, "value": a.value} for a in self.arguments
            ],
            "simulation": None
            if sim is None
            else {
                "success": sim.success,
                "vm_status": sim.vm_status,
                "gas_used": str(sim.gas_used),
                "gas_unit_price": str(sim.gas_unit_price),
                "balance_changes": [c.as_json() for c in sim.balance_changes or ()],
            },
            "notes": list(self.notes),
        }

    def lines(self) -> list[str]:
        """A human-readable rendering, one line each."""
        out = [f"function: {self.function}"]
        out += [f"  type_arg{i}: {t}" for i, t in enumerate(self.type_arguments)]
        for arg in self.arguments:
            out.append(f"  {arg.name} ({arg.move_type}) = {json.dumps(arg.value)}")
        sim = self.simulation
        if sim is None:
            out.append("simulation: none")
        else:
            verdict = "success" if sim.success else "FAILED"
            out.append(f"simulation: {verdict} ({sim.vm_status}), gas used {sim.gas_used}")
            if sim.balance_changes is None:
                out.append("  balance changes: not reported by the node")
            for change in sim.balance_changes or ():
                sign = "+" if change.delta > 0 else ""
                out.append(f"  {change.account} {change.asset}: {sign}{change.delta}")
        out += [f"note: {n}" for n in self.notes]
        return out


def build_report(
    abi: FunctionAbi,
    payload: EntryFunction,
    simulation: SimulationResult | None,
    notes: list[str],
) -> DryRunReport:
    """Decode `payload` by `abi` into a report."""
    decoded = decode_entry_function(payload, abi)
    type_args = [parse_move_type(t) for t in decoded["type_arguments"]]
    views = tuple(
        ArgumentView(
            i,
            str(substitute(t, type_args) if abi.arg_has_generics[i] else t),
            value,
        )
        for i, (t, value) in enumerate(zip(abi.arg_types, decoded["arguments"], strict=True))
    )
    return DryRunReport(
        function=decoded["function"],
        type_arguments=tuple(decoded["type_arguments"]),
        arguments=views,
        simulation=simulation,
        notes=tuple(notes),
    )
