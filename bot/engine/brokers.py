"""Brokers carry out what strategies decided: for real (live, paper) or only on paper (dry run).

* `LiveBroker`: the executor — intent, API, signer, outcome (the paper mode uses it too,
  against the paper world).
* `DryRunBroker`: nothing that spends is sent — no createOrder, cancelOrder or transaction.
  A swap's `POST /swap` spends nothing, so its quote and `txData` are fetched, decoded by the
  ABI and shown (with the simulated effects when a signer and node are at hand).
"""

from __future__ import annotations

from bot.api import ApiError, PanoraClient, SwapRequest
from bot.api.models import SwapResponseExactIn
from bot.aptos.tokens import TokenBook
from bot.chain import ChainError, Signer
from bot.engine.actions import (  # describe: re-exported, where callers found it
    Action,
    Swap,
    describe,
)
from bot.engine.executor import Executor
from bot.engine.ports import ActionOutcome, Broker
from bot.engine.progress import BLOCKING_STATES
from bot.money import format_decimal
from bot.price_view import PriceConvention

__all__ = ["ActionOutcome", "Broker", "DryRunBroker", "LiveBroker", "describe"]


class LiveBroker:
    """Carries actions out for real through the executor."""

    def __init__(self, executor: Executor) -> None:
        self.executor = executor

    async def carry_out(self, strategy: str, action: Action) -> ActionOutcome:
        """Execute exactly once (per strategy and key)."""
        result = await self.executor.execute(strategy, action)
        detail = result.detail
        if result.duplicate:
            detail = (
                "held: an earlier attempt under this key has an unknown outcome (bot reconcile)"
                if result.state in BLOCKING_STATES
                else "already done under this key"
            )
        return ActionOutcome(
            result.state, result.order_id, result.tx_hash, detail, duplicate=result.duplicate
        )


class DryRunBroker:
    """Shows what would be done; sends nothing that spends."""

    def __init__(
        self,
        client: PanoraClient,
        tokens: TokenBook,
        wallet: str,
        signer: Signer | None = None,
        convention: PriceConvention | None = None,
    ) -> None:
        self.convention = convention
        self.client = client
        self.tokens = tokens
        self.wallet = wallet
        self.signer = signer

    async def carry_out(self, strategy: str, action: Action) -> ActionOutcome:
        """Describe the action; for a swap, fetch and decode its transaction."""
        lines = [f"[dry run] {strategy}: {describe(action, self.convention)}"]
        if isinstance(action, Swap):
            lines += await self._swap(action)
        return ActionOutcome("dry-run", lines=lines)

    async def _swap(self, action: Swap) -> list[str]:
        sell, buy = self.tokens.find(action.sell), self.tokens.find(action.buy)
        try:
            response = await self.client.swap(
                SwapRequest(
                    from_token=sell.address,
                    to_token=buy.address,
                    from_amount=action.sell_amount,
                    to_amount=action.buy_amount,
                    to_wallet=self.wallet,
                    slippage=action.slippage,
                )
            )
        except (ApiError, ValueError) as exc:
            return [f"  quote failed: {exc}"]
        if isinstance(response, SwapResponseExactIn):
            got = response.best
            lines = [
                f"  quote: receive {format_decimal(got.to_token_amount)} {buy.symbol} "
                f"(at least {format_decimal(got.min_to_token_amount)})"
            ]
        else:
            pay = response.best
            lines = [
                f"  quote: pay {format_decimal(pay.from_token_amount)} {sell.symbol} "
                f"(at most {format_decimal(pay.max_from_token_amount)})"
            ]
        best = response.best
        if best.tx_data is None:
            return [*lines, "  no txData in the answer"]
        lines.append(f"  txData: {best.tx_data.function}")
        if self.signer is not None:
            try:
                report = await self.signer.dry_run(best.tx_data.as_json())
                lines += [f"  {line}" for line in report.lines()]
            except ChainError as exc:
                lines.append(f"  decode/simulation unavailable: {exc}")
        return lines
