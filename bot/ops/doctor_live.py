"""`bot doctor`'s proofs against the services themselves: prices, a quote, the swap, the router.

The other checks prove the set-up can reach the provider and the node; these prove the
provider and the node still answer the way the bot trades, read-only (issue #16):

* `APT and USDC prices`: `GET /prices` for just those two (`tokenAddress` list) gives both
  a USD price;
* `swap quote`: a quote (`POST /swap`, no wallet) for `PROBE_APT` APT → USDC has a route;
* `swap function allowed`: with a wallet, `POST /swap` for the same amount gives a txData
  whose function is on `[chain].allowed_functions` (the signer's own check). A swap answer
  spends nothing: nothing is signed or sent;
* `router ABI on chain`: the node's ABI of that function's module
  (`GET /v1/accounts/{a}/module/{m}`) has the function with the same type-parameter count
  and parameter types, in order, as the router ABI the bot was built against
  (`bot/paper/data/panora_swap_module_abi.json`, copied from mainnet): the layout
  `bot.chain.router_terms` reads the signed arguments by. The signer encodes by the node's
  ABI, so a changed router would not fail to encode: its calls would be judged by the
  wrong positions. This line catches that before the first trade.

In live mode (or `--live`) they run against the live provider and node, in paper mode
against the paper world. A 401 or 403 from the provider is "the provider refused the API
key" on every line.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Final

from bot.api.client import PanoraClient
from bot.api.errors import ApiError, NoRoute, ResponseError
from bot.api.models import SwapResponseExactIn
from bot.api.params import SwapRequest
from bot.api.tokens import token_of
from bot.aptos.abi import AbiError, FunctionAbi, ModuleAbi
from bot.aptos.address import AddressError, FunctionId
from bot.aptos.tokens import Token, TokenBook, TokenLookupError
from bot.chain import ROUTER_FUNCTION, ChainError, NodeClient, NodeError, SignerPolicy
from bot.chain.errors import PolicyRefused
from bot.engine.strategy import Strategy
from bot.money import format_decimal
from bot.ops.doctor import FAIL, PASS, SKIP, WARN, CheckResult, Doctor

__all__ = [
    "PROBE_APT",
    "REFUSED_KEY_STATUSES",
    "LiveDoctor",
    "abi_difference",
    "check_router_abi",
    "reference_abi",
    "refused_key",
]

PROBE_APT: Final = Decimal("0.1")
"""APT sold in the probe quote and swap: small, on the provider's deepest market."""
PROBE_SELL: Final = "APT"
PROBE_BUY: Final = "USDC"
REFUSED_KEY_STATUSES: Final = frozenset({401, 403})
"""Provider statuses that mean the API key was refused."""

PRICES, QUOTE, FUNCTION, ABI = (
    "APT and USDC prices",
    "swap quote",
    "swap function allowed",
    "router ABI on chain",
)
_API_FAILED: Final = "the API check failed"
_NODE_FAILED: Final = ("node reachable", "node chain id")


def _function_id(text: str) -> FunctionId | None:
    try:
        return FunctionId.parse(text)
    except AddressError:
        return None


def reference_abi(function: FunctionId) -> FunctionAbi | None:
    """The ABI the bot was built against for `function` (the router's only), or None."""
    from bot.paper.core.modules import ModuleRegistry  # the packaged mainnet router ABI

    if function.module_id != ROUTER_FUNCTION.module_id:
        return None
    module = ModuleRegistry().abi(str(function.address), function.module)
    try:
        return module.function(function.function) if module is not None else None
    except AbiError:
        return None


def abi_difference(on_chain: FunctionAbi, reference: FunctionAbi) -> str | None:
    """The first way `on_chain` differs from `reference` in what a call depends on, or None.

    Compared: entry or not, the type-parameter count, the parameter count, then each
    parameter's type in order (`params[i]` counts from 0, the leading `&signer` included).
    """
    if on_chain.is_entry != reference.is_entry:
        entry = f"is_entry is {on_chain.is_entry} on chain"
        return f"{entry}, {reference.is_entry} in the codec's ABI"
    if on_chain.type_params != reference.type_params:
        return (
            f"{on_chain.type_params} type parameters on chain, "
            f"{reference.type_params} in the codec's ABI"
        )
    for index, (ours, theirs) in enumerate(zip(reference.params, on_chain.params, strict=False)):
        if ours != theirs:
            return f"params[{index}] is {theirs} on chain, {ours} in the codec's ABI"
    if len(on_chain.params) != len(reference.params):
        count = f"{len(on_chain.params)} parameters on chain"
        return f"{count}, {len(reference.params)} in the codec's ABI"
    return None


async def check_router_abi(node: NodeClient, function: FunctionId) -> CheckResult:
    """The node's ABI of `function` equals the one the bot was built against."""
    reference = reference_abi(function)
    if reference is None:
        return CheckResult(
            ABI, WARN, f"no packaged ABI for {function} to compare with (only the router's)"
        )
    try:
        module: ModuleAbi = await node.module_abi(function.address, function.module)
        on_chain = module.function(function.function)
    except NodeError as exc:
        if exc.status == 404:
            return CheckResult(
                ABI,
                FAIL,
                f"the node has no {function}: check [chain].node_url and [chain].allowed_functions",
            )
        return CheckResult(ABI, FAIL, f"cannot read {function.module_id}: {exc}")
    except ChainError as exc:
        return CheckResult(ABI, FAIL, f"cannot read {function.module_id}: {exc}")
    except AbiError as exc:
        return CheckResult(ABI, FAIL, f"{exc}: the router changed; do not trade live with it")
    difference = abi_difference(on_chain, reference)
    if difference is not None:
        return CheckResult(
            ABI,
            FAIL,
            f"{function.function}: {difference}: the router changed; do not trade live "
            "until the bot knows its new layout",
        )
    return CheckResult(
        ABI,
        PASS,
        f"{function.function}: {len(on_chain.params)} parameters, {on_chain.type_params} "
        "type parameters, as in the codec's ABI",
    )


def refused_key(name: str, exc: ApiError, *, paper: bool) -> CheckResult | None:
    """The FAIL for a provider status that refuses the API key (401, 403), else None."""
    if not isinstance(exc, ResponseError) or exc.status_code not in REFUSED_KEY_STATUSES:
        return None
    where = "[paper].api_keys" if paper else "[api].api_key, BOT_API__API_KEY or [api].api_key_file"
    return CheckResult(
        name, FAIL, f"the provider refused the API key ({exc.status_code}): check {where}"
    )


def _no_route(name: str, exc: NoRoute) -> CheckResult:
    return CheckResult(
        name,
        FAIL,
        f"{exc.describe(PROBE_SELL, PROBE_BUY)} (the provider answered quotes: []): no "
        "route on its deepest market, its sources may be down; try again later",
    )


def _probe_request(sell: Token, buy: Token, wallet: str | None = None) -> SwapRequest:
    return SwapRequest(
        from_token=sell.address, to_token=buy.address, from_amount=PROBE_APT, to_wallet=wallet
    )


@dataclass
class LiveDoctor(Doctor):
    """`Doctor` followed by the proofs of this module, before the unknown-fields line.

    Attributes:
        allowed_functions: `[chain].allowed_functions` as the mode means it (paper mode
            adds the paper order modules).
    """

    allowed_functions: Sequence[str] = ()
    _book: TokenBook | None = field(default=None, init=False, repr=False)
    _wallet: str | None = field(default=None, init=False, repr=False)

    async def check_orders(self, book: TokenBook | None, wallet: str | None) -> CheckResult:
        """The base check; the token list and wallet it is given are kept for the proofs."""
        self._book, self._wallet = book, wallet
        return await super().check_orders(book, wallet)

    async def run(self, strategies: Sequence[Strategy]) -> list[CheckResult]:
        """Every base check, with the live proofs inserted before `unknown response fields`."""
        results = await super().run(strategies)
        proofs = await self.proofs({r.name for r in results if r.failed})
        at = next(
            (i for i, r in enumerate(results) if r.name == "unknown response fields"),
            len(results),
        )
        return [*results[:at], *proofs, *results[at:]]

    async def proofs(self, failed: set[str]) -> list[CheckResult]:
        """Prices, quote, swap function and router ABI; skipped when what they need failed."""
        client, book = self.client, self._book
        lines: list[CheckResult] = []
        function: FunctionId | None = None
        if client is None or book is None:
            lines += [CheckResult(n, SKIP, _API_FAILED) for n in (PRICES, QUOTE, FUNCTION)]
        else:
            try:
                tokens = book.find(PROBE_SELL), book.find(PROBE_BUY)
            except TokenLookupError as exc:
                why = f"the provider's token list: {exc}"
                lines += [CheckResult(n, FAIL, why) for n in (PRICES, QUOTE, FUNCTION)]
            else:
                lines.append(await self.check_prices(client, tokens))
                lines.append(await self.check_quote(client, tokens))
                swap_line, function = await self.check_swap_function(client, tokens)
                lines.append(swap_line)
        if failed & set(_NODE_FAILED):
            lines.append(CheckResult(ABI, SKIP, "node not usable"))
        else:
            lines.append(await check_router_abi(self.node, function or ROUTER_FUNCTION))
        return lines

    def _provider_failure(self, name: str, exc: ApiError) -> CheckResult:
        refused = refused_key(name, exc, paper=self.settings.mode == "paper")
        return refused or CheckResult(name, FAIL, str(exc))

    async def check_prices(self, client: PanoraClient, tokens: tuple[Token, Token]) -> CheckResult:
        """`GET /prices` for APT and USDC alone (`tokenAddress` list): both with a USD price."""
        try:
            prices = await client.get_prices([t.address for t in tokens])
        except ApiError as exc:
            return self._provider_failure(PRICES, exc)
        shown = []
        for token in tokens:
            usd = next(
                (
                    r.usd_price
                    for r in prices.records
                    if set(token_of(r).keys) & set(token.keys) and r.usd_price is not None
                ),
                None,
            )
            if usd is None:
                return CheckResult(
                    PRICES,
                    FAIL,
                    f"GET /prices for {PROBE_SELL} and {PROBE_BUY} has no USD price for "
                    f"{token.symbol} ({token.address}): the provider's price feed is down or "
                    "changed; do not trade live until it lists one",
                )
            shown.append(f"{token.symbol} {format_decimal(usd)} USD")
        return CheckResult(PRICES, PASS, f"GET /prices for the two: {', '.join(shown)}")

    async def check_quote(self, client: PanoraClient, tokens: tuple[Token, Token]) -> CheckResult:
        """A quote (`POST /swap`, no wallet) for `PROBE_APT` APT → USDC has a route."""
        try:
            response = await client.quote(_probe_request(*tokens))
        except NoRoute as exc:
            return _no_route(QUOTE, exc)
        except ApiError as exc:
            return self._provider_failure(QUOTE, exc)
        if not isinstance(response, SwapResponseExactIn):  # pragma: no cover - ExactIn asked
            return CheckResult(QUOTE, FAIL, "the quote is not an ExactIn answer")
        best, count = response.best, len(response.quotes)
        return CheckResult(
            QUOTE,
            PASS,
            f"{format_decimal(PROBE_APT)} {PROBE_SELL} → {format_decimal(best.to_token_amount)} "
            f"{PROBE_BUY} (at least {format_decimal(best.min_to_token_amount)}), "
            f"{count} quote{'s' if count != 1 else ''}",
        )

    async def check_swap_function(
        self, client: PanoraClient, tokens: tuple[Token, Token]
    ) -> tuple[CheckResult, FunctionId | None]:
        """`POST /swap` with the wallet: its txData's function is on the allowlist.

        Returns the line and the function the txData calls (None when there is none).
        Nothing is signed or sent: a swap answer spends nothing.
        """
        wallet = self._wallet
        if wallet is None:
            why = "no wallet address (no key loaded, [wallet].address unset)"
            return CheckResult(FUNCTION, SKIP, why), None
        try:
            response = await client.swap(_probe_request(*tokens, wallet))
        except NoRoute as exc:
            return _no_route(FUNCTION, exc), None
        except ApiError as exc:
            return self._provider_failure(FUNCTION, exc), None
        tx_data = response.best.tx_data
        if tx_data is None:
            return CheckResult(FUNCTION, FAIL, "POST /swap answered without txData"), None
        policy = SignerPolicy(
            chain_id=self.chain_id,
            allowed_functions=frozenset(FunctionId.parse(f) for f in self.allowed_functions),
        )
        try:
            function = policy.check_function(tx_data.as_json())
        except PolicyRefused as exc:
            detail = f"POST /swap: {exc.reason}: the signer would refuse every swap"
            if exc.fix:  # not on the allowlist (else: no function id at all)
                detail += f"; if it is the provider's router (docs/signer.md), {exc.fix}"
            return CheckResult(FUNCTION, FAIL, detail), _function_id(exc.function)
        return CheckResult(
            FUNCTION, PASS, f"POST /swap calls {function}, on [chain].allowed_functions"
        ), function
