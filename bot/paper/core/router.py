"""The paper world's `txData`: a call to the real router function, in its real shape.

`POST /swap` answers with `…::panora_swap::router_entry`, 32 type arguments and 20 JSON
arguments shaped like the real service's (`shared/fixtures/aptos/panora_router_entry_txdata.json`),
so the bot's codec and signer meet the real format. Which argument carries what is the
paper world's own convention, documented in `docs/paper-world.md`; nothing outside the
paper world may rely on it (the signer judges a swap by its simulated effects).

Argument layout (index into `arguments`, after the leading `&signer`):

| # | Move type | paper meaning |
|---|---|---|
| 0 | `Option<signer>` | `null` |
| 1 | `address` | platform fee receiver |
| 3 | `u8` | mode: 1 ExactIn, 2 ExactOut |
| 10 | `vector<vector<address>>` | `[[sold token FA address]]` |
| 11 | `vector<vector<address>>` | `[[bought token FA address]]` |
| 15 | `address` | recipient of the bought tokens |
| 16 | `vector<u64>` | `[amount in]` (ExactIn) or `[maximum in]` (ExactOut), base units |
| 17 | `u64` | minimum out (ExactIn) or exact out (ExactOut), base units |
| 18 | `u64` | integrator fee in hundredths of a percent |
| 19 | `address` | integrator fee receiver (`0x0` when none) |

The other arguments carry fixed route-shaped filler of the right Move types.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from bot.aptos.address import Address

__all__ = [
    "PLATFORM_FEE_RECEIVER",
    "ROUTER_FUNCTION",
    "ROUTER_MODULE_ADDRESS",
    "RouterCall",
    "RouterFormatError",
    "build_router_txdata",
]

ROUTER_MODULE_ADDRESS: Final = "0x1c3206329806286fd2223647c9f9b130e66baeb6d7224a18c1f642ffe48f3b4c"
ROUTER_FUNCTION: Final = f"{ROUTER_MODULE_ADDRESS}::panora_swap::router_entry"
PLATFORM_FEE_RECEIVER: Final = "0x" + "fe" * 32
_STRING: Final = "0x1::string::String"
_TYPE_ARGS: Final = 32
_ARGS: Final = 20


class RouterFormatError(ValueError):
    """Router arguments that do not follow the paper layout."""


@dataclass(frozen=True)
class RouterCall:
    """What a paper router call asks for, in base units."""

    exact_in: bool
    sell_fa: str
    buy_fa: str
    recipient: str
    amount_in: int
    """ExactIn: the amount sold. ExactOut: the most the sender will pay."""
    amount_out: int
    """ExactIn: the least the sender accepts. ExactOut: the exact amount bought."""
    integrator_fee_hundredths: int
    integrator: str | None

    @classmethod
    def parse(cls, arguments: list[Any]) -> RouterCall:
        """Read a call from canonical JSON arguments (as the codec decodes them)."""
        if len(arguments) != _ARGS:
            raise RouterFormatError(f"router_entry takes {_ARGS} arguments, got {len(arguments)}")
        try:
            mode = int(arguments[3])
            integrator = str(Address.parse(str(arguments[19])))
            return cls(
                exact_in=mode == 1,
                sell_fa=str(Address.parse(str(arguments[10][0][0]))),
                buy_fa=str(Address.parse(str(arguments[11][0][0]))),
                recipient=str(Address.parse(str(arguments[15]))),
                amount_in=int(arguments[16][0]),
                amount_out=int(arguments[17]),
                integrator_fee_hundredths=int(arguments[18]),
                integrator=None if integrator == "0x0" else integrator,
            )
        except (IndexError, TypeError, ValueError) as exc:
            raise RouterFormatError(f"not a paper router call: {exc}") from None


def build_router_txdata(
    call: RouterCall, sell_coin_type: str | None, buy_coin_type: str | None
) -> dict[str, Any]:
    """The `txData` object for a swap, in the real router's shape."""
    type_arguments = [_STRING] * _TYPE_ARGS
    type_arguments[1] = sell_coin_type or _STRING
    type_arguments[2] = buy_coin_type or _STRING
    type_arguments[-1] = "0x1::aptos_coin::AptosCoin"
    arguments: list[Any] = [
        None,
        PLATFORM_FEE_RECEIVER,
        "1",
        "1" if call.exact_in else "2",
        ["1", "0"],
        [[["40"]]],
        [[["0"]]],
        [[["true"]]],
        [["1"]],
        [[[call.sell_fa]]],
        [[call.sell_fa]],
        [[call.buy_fa]],
        None,
        [[["10000"]]],
        None,
        call.recipient,
        [str(call.amount_in)],
        str(call.amount_out),
        str(call.integrator_fee_hundredths),
        call.integrator or "0x0",
    ]
    return {"function": ROUTER_FUNCTION, "type_arguments": type_arguments, "arguments": arguments}
