"""The paper world's `txData`: a call to the real router function, in its real shape.

`POST /swap` answers with `…::panora_swap::router_entry`, 32 type arguments and 20 JSON
arguments laid out as the real service lays them out, so the bot's codec and signer meet
the real format. The layout follows real evidence (docs/signer.md, "Which router arguments
are judged"): a mainnet swap with an integrator fee and its events, a public Move wrapper
of the router that names its parameters, and the okx/js-wallet-sdk fixture.

Argument layout (index into `arguments`, after the leading `&signer`):

| # | Move type | meaning |
|---|---|---|
| 0 | `Option<signer>` | `null` |
| 1 | `address` | recipient of the bought tokens (`toWalletAddress`) |
| 2 | `u64` | swap type: 1 ExactIn, 2 ExactOut (the real ExactOut value is not public) |
| 3 | `u8` | number of split routes (the length of argument 16) |
| 10 | `vector<vector<address>>` | `[[sold token FA address]]` (input token per hop) |
| 11 | `vector<vector<address>>` | `[[bought token FA address]]` (output token per hop) |
| 15 | `address` | the bought token's FA address |
| 16 | `vector<u64>` | `[amount in]` (ExactIn) or `[maximum in]` (ExactOut), base units |
| 17 | `u64` | minimum out (ExactIn) or exact out (ExactOut), base units |
| 18 | `u64` | integrator fee word: 0 for none, else `FEE_FLAGS + percent × 10^4` |
| 19 | `address` | integrator fee receiver (the provider's fee wallet when none) |

The other arguments carry fixed route-shaped filler of the right Move types.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from bot.aptos.address import Address
from bot.domain import APT_COIN_TYPE, ROUTER_FUNCTION, ROUTER_MODULE_ADDRESS

__all__ = [
    "FEE_FLAGS",
    "PLATFORM_FEE_RECEIVER",
    "ROUTER_FUNCTION",
    "ROUTER_MODULE_ADDRESS",
    "RouterCall",
    "RouterFormatError",
    "build_router_txdata",
]

PLATFORM_FEE_RECEIVER: Final = "0xd0b17bea776bb87b70b2fb2ca631014f0ca94fc1acde4b8ff1a763f4172aa6c4"
"""The provider's own fee wallet, where real calls without an integrator put argument 19."""
FEE_FLAGS: Final = 11 * 10**15
"""The high part of a real integrator fee word (`11000000000005000` for 0.5%)."""
_FEE_PART: Final = 10**15
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
    integrator_fee_e4: int
    """The integrator fee in percent × 10^4 (5000: 0.5%)."""
    integrator: str | None

    @classmethod
    def parse(cls, arguments: list[Any]) -> RouterCall:
        """Read a call from canonical JSON arguments (as the codec decodes them)."""
        if len(arguments) != _ARGS:
            raise RouterFormatError(f"router_entry takes {_ARGS} arguments, got {len(arguments)}")
        try:
            mode = int(arguments[2])
            fee = int(arguments[18]) % _FEE_PART
            integrator = str(Address.parse(str(arguments[19])))
            return cls(
                exact_in=mode == 1,
                sell_fa=str(Address.parse(str(arguments[10][0][0]))),
                buy_fa=str(Address.parse(str(arguments[11][0][0]))),
                recipient=str(Address.parse(str(arguments[1]))),
                amount_in=sum(int(a) for a in arguments[16]),
                amount_out=int(arguments[17]),
                integrator_fee_e4=fee,
                integrator=integrator if fee else None,
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
    type_arguments[-1] = APT_COIN_TYPE
    fee = call.integrator_fee_e4
    arguments: list[Any] = [
        None,
        call.recipient,
        "1" if call.exact_in else "2",
        "1",
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
        call.buy_fa,
        [str(call.amount_in)],
        str(call.amount_out),
        str(FEE_FLAGS + fee if fee else 0),
        call.integrator if fee and call.integrator else PLATFORM_FEE_RECEIVER,
    ]
    return {"function": ROUTER_FUNCTION, "type_arguments": type_arguments, "arguments": arguments}
