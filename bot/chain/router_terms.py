"""What a `panora_swap::router_entry` call asks for, read from the arguments that are signed.

The signer judges a swap by the bot's own numbers (docs/signer.md, "Trust model"); the
router's arguments are read only to hold them to those numbers. Positions are indexes into
the JSON `arguments` (after the leading `&signer`), as decoded by the function's on-chain
ABI (`bot.aptos.codec`), so what is judged is exactly what the BCS payload carries:

* 1 `address`: the recipient of the bought token (`toWalletAddress`);
* 16 `vector<u64>`: the amounts in per split route, summed (ExactIn: the amount sold;
  ExactOut: the most that may be sold);
* 17 `u64`: ExactIn: the on-chain minimum out (after fees); ExactOut: the exact amount out;
* 18 `u64`: the integrator fee word: 0 for none, else flags above 10^15 and the fee in
  percent × 10^4 below (`11000000000005000` is 0.5%);
* 19 `address`: the integrator fee's receiver (the provider's own fee wallet when none).

The evidence for each position is in docs/signer.md ("Which router arguments are judged").
Every other argument (route, pools, hop data) is left to the simulation's effects: no
public source says what it means, and a wrong guess would refuse honest routes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from bot.aptos.address import Address, AddressError
from bot.aptos.codec import json_u64

__all__ = ["ROUTER_ARGUMENTS", "RouterTerms", "RouterTermsError"]

ROUTER_ARGUMENTS: Final = 20
_RECIPIENT, _AMOUNTS_IN, _AMOUNT_OUT, _FEE, _FEE_RECEIVER = 1, 16, 17, 18, 19
_FEE_PART: Final = 10**15


class RouterTermsError(ValueError):
    """Router arguments that are not in the layout the signer can judge."""


def _u64(value: object, index: int) -> int:
    return json_u64(value, f"argument {index}", RouterTermsError)


def _address(value: object, index: int) -> Address:
    try:
        return Address.parse(str(value))
    except AddressError:
        raise RouterTermsError(f"argument {index} is not an address") from None


@dataclass(frozen=True)
class RouterTerms:
    """The judged terms of one router call, in base units."""

    recipient: Address
    amount_in: int
    """ExactIn: the amount sold. ExactOut: the most that may be sold (all splits summed)."""
    amount_out: int
    """ExactIn: the least the recipient accepts. ExactOut: the exact amount bought."""
    integrator_fee_word: int
    """The raw fee word of argument 18 (0: no integrator fee)."""
    integrator: Address

    @property
    def integrator_fee_e4(self) -> int:
        """The integrator fee in percent × 10^4, as the fee word's low part carries it."""
        return self.integrator_fee_word % _FEE_PART

    @classmethod
    def read(cls, arguments: Sequence[object]) -> RouterTerms:
        """Read the judged positions from canonical decoded arguments.

        Raises:
            RouterTermsError: the arguments are not in the known layout.
        """
        if len(arguments) != ROUTER_ARGUMENTS:
            raise RouterTermsError(
                f"router_entry takes {ROUTER_ARGUMENTS} arguments, got {len(arguments)}"
            )
        amounts = arguments[_AMOUNTS_IN]
        if not isinstance(amounts, list) or not amounts:
            raise RouterTermsError(f"argument {_AMOUNTS_IN} is not a non-empty vector<u64>")
        return cls(
            recipient=_address(arguments[_RECIPIENT], _RECIPIENT),
            amount_in=sum(_u64(a, _AMOUNTS_IN) for a in amounts),
            amount_out=_u64(arguments[_AMOUNT_OUT], _AMOUNT_OUT),
            integrator_fee_word=_u64(arguments[_FEE], _FEE),
            integrator=_address(arguments[_FEE_RECEIVER], _FEE_RECEIVER),
        )
