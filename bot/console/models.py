"""The console's answers: typed pydantic models (the OpenAPI schema at /docs).

Money and rates are exact decimal strings (`bot.money.format_decimal`), never JSON
numbers; counts are integers; times are ISO-8601 UTC.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from bot.domain import OrderKind

__all__ = [
    "AlertModel",
    "AlertsAnswer",
    "BalanceModel",
    "BalancesAnswer",
    "CancelBody",
    "CommandAccepted",
    "CommandModel",
    "CommandsAnswer",
    "FiguresModel",
    "FillModel",
    "FillOfOrderModel",
    "FillsPage",
    "HealthAnswer",
    "HoldingModel",
    "IntentModel",
    "IntentTransitionModel",
    "IntentsPage",
    "OrderDetail",
    "OrderModel",
    "OrdersPage",
    "PnlAnswer",
    "PnlSummaryModel",
    "PositionModel",
    "PriceModel",
    "PricesAnswer",
    "Problem",
    "RemoteBotModel",
    "RemotesAnswer",
    "ReportFileModel",
    "ReportsAnswer",
    "ScheduleModel",
    "StatusAnswer",
    "StrategiesAnswer",
    "StrategyModel",
    "TransactionModel",
    "TransactionsPage",
    "TransitionModel",
    "ValueAnswer",
    "ValuePointModel",
    "WalletSeriesModel",
]

Money = str
"""An exact decimal as text (`"12.5"`): never a float."""


class Problem(BaseModel):
    """Every refusal: one line."""

    detail: str


class HealthAnswer(BaseModel):
    """Is the daemon up and well (from its last status)."""

    ok: bool
    state: str | None
    healthy: bool | None
    problem: str | None
    version: str
    now: datetime


class StatusAnswer(BaseModel):
    """The daemon's last status (what `bot status` reads); `available` False: none yet."""

    available: bool
    state: str | None = None
    mode: str | None = None
    wallet: str | None = None
    version: str | None = None
    dry_run: bool | None = None
    started_at: str | None = None
    updated_at: str | None = None
    healthy: bool | None = None
    problem: str | None = None
    open_orders: int | None = None
    apt_balance: Money | None = None
    errors: int | None = None
    last_poll_at: str | None = None
    last_poll_ok_at: str | None = None
    heartbeat_seconds: int | None = None
    reloaded_at: str | None = None
    market_now: str | None = None
    clock: str | None = None


class ScheduleModel(BaseModel):
    """When a strategy ticks: every N seconds or a cron line (UTC)."""

    interval_seconds: int | None
    cron: str | None
    tick_at_start: bool | None


class StrategyModel(BaseModel):
    """One strategy: its configuration and what the daemon last said of it."""

    name: str
    configured: bool
    plugin: str | None
    enabled: bool | None
    params: dict[str, Any]
    schedule: ScheduleModel | None
    budget: dict[str, Money]
    paused: bool
    paused_since: datetime | None
    ticks: int | None
    actions: int | None
    errors: int | None
    refused: int | None
    last_tick: str | None
    last_error: str | None
    next_tick: str | None
    stuck: str | None


class StrategiesAnswer(BaseModel):
    """Every strategy configured, paused or seen by the daemon."""

    items: list[StrategyModel]


class OrderModel(BaseModel):
    """One provider order as the journal holds it (human-unit amounts)."""

    kind: str
    order_id: str
    strategy: str | None
    wallet: str
    from_token: str
    to_token: str
    from_symbol: str | None = Field(default=None, description="`from_token`'s symbol, if known.")
    to_symbol: str | None = Field(default=None, description="`to_token`'s symbol, if known.")
    status: str
    amount_total: Money
    amount_spent: Money | None
    amount_balance: Money | None
    to_amount_received: Money | None
    rate: Money | None
    min_rate: Money | None
    max_rate: Money | None
    interval_value: int | None
    interval_period: str | None
    orders_total: int | None
    orders_completed: int | None
    expire_at: datetime | None
    provider_created_at: datetime | None
    intent_id: int | None
    created_at: datetime
    updated_at: datetime
    last_seen_at: datetime


class OrdersPage(BaseModel):
    """One page of orders, newest first; `next_cursor` fetches the next (None: last)."""

    items: list[OrderModel]
    total: int
    next_cursor: str | None


class TransitionModel(BaseModel):
    """One recorded status change of an order."""

    from_status: str | None
    to_status: str
    observed_at: datetime
    source: str


class FillModel(BaseModel):
    """One `txDetails` record of an order (an execution, its creation, a refund…)."""

    tx_id: str
    type: str
    tx_number: int | None
    from_amount: Money | None
    to_amount: Money | None
    fee_amount: Money | None
    time: datetime | None
    keeper: str | None
    price_to_per_from: Money | None
    recorded_at: datetime


class IntentTransitionModel(BaseModel):
    """One state an intent went through."""

    from_state: str | None
    state: str
    at: datetime
    detail: str | None


class IntentModel(BaseModel):
    """One intent: what a strategy (or the user) meant to do, and how far it got."""

    id: int
    strategy: str
    wallet: str
    kind: str
    idempotency_key: str
    action: dict[str, Any]
    state: str
    created_at: datetime
    updated_at: datetime
    order_id: str | None
    tx_hash: str | None
    error: str | None
    history: list[IntentTransitionModel] | None = None


class IntentsPage(BaseModel):
    """One page of intents, newest first."""

    items: list[IntentModel]
    total: int
    next_cursor: str | None


class TransactionModel(BaseModel):
    """One signed transaction and what is known of its fate."""

    hash: str
    sender: str
    sequence_number: int
    payload_summary: str
    state: str
    intent_id: int | None
    gas_used: int | None
    vm_status: str | None
    created_at: datetime
    updated_at: datetime


class TransactionsPage(BaseModel):
    """One page of transactions, newest first."""

    items: list[TransactionModel]
    total: int
    next_cursor: str | None


class OrderDetail(BaseModel):
    """One order with its transitions, fills, intent and transactions."""

    order: OrderModel
    transitions: list[TransitionModel]
    fills: list[FillModel]
    intent: IntentModel | None
    transactions: list[TransactionModel]


class FillOfOrderModel(FillModel):
    """One fill with its order: kind, id, strategy and tokens (exact and as symbols)."""

    row_id: int
    kind: str
    order_id: str
    strategy: str | None
    from_token: str
    to_token: str
    from_symbol: str | None
    to_symbol: str | None


class FillsPage(BaseModel):
    """One page of fills across orders, newest first (by when they were recorded)."""

    items: list[FillOfOrderModel]
    total: int
    next_cursor: str | None


class ValuePointModel(BaseModel):
    """The wallet at one moment: its holdings' value and remaining cost, its P&L so far."""

    at: datetime
    value_usd: Money | None
    cost_usd: Money
    pnl_usd: Money | None


class WalletSeriesModel(BaseModel):
    """One wallet's value through time (evenly spaced moments, then its valuation)."""

    wallet: str
    points: list[ValuePointModel]


class ValueAnswer(BaseModel):
    """Each wallet's value over time, at most `points` moments of the window each."""

    start: datetime | None = Field(serialization_alias="from")
    end: datetime | None = Field(serialization_alias="to")
    valued_at: datetime | None
    cost_basis: str
    wallets: list[WalletSeriesModel]


class ReportFileModel(BaseModel):
    """One report file under `[console].reports_dir`."""

    path: str = Field(description="Relative to the reports folder, `/`-separated.")
    url: str
    size: int
    modified: datetime


class ReportsAnswer(BaseModel):
    """The HTML reports found (newest first), and whether the list was cut short."""

    folder_exists: bool
    items: list[ReportFileModel]
    truncated: bool


class BalanceModel(BaseModel):
    """One token's balance."""

    token: str
    amount: Money
    symbol: str | None = None


class BalancesAnswer(BaseModel):
    """The balances the daemon last reported (`source`: where they come from)."""

    source: Literal["status", "none"]
    as_of: str | None
    items: list[BalanceModel]


class PriceModel(BaseModel):
    """One recorded price."""

    timestamp: datetime
    token: str
    symbol: str | None
    usd_price: Money
    native_price: Money | None
    source: str | None


class PricesAnswer(BaseModel):
    """Recorded prices of one token, oldest first (the latest `limit` of the window)."""

    token: str
    items: list[PriceModel]


class AlertModel(BaseModel):
    """One alert the daemon raised."""

    kind: str
    text: str
    at: datetime
    fields: dict[str, str]


class AlertsAnswer(BaseModel):
    """Recent alerts, newest first; `kept` False: this daemon keeps none to show."""

    kept: bool
    items: list[AlertModel]


class _Open(BaseModel):
    """Accounting figures pass through whole: a field added to the report shows up."""

    model_config = ConfigDict(extra="allow")


class FiguresModel(_Open):
    """Totals of a set of trades (docs/accounting.md), exact."""

    trades: int
    invested: dict[str, Money]
    received: dict[str, Money]
    traded_usd: Money
    fees: dict[str, dict[str, Money]]
    fees_usd: Money
    gas_octas: int
    gas_usd: Money
    realised_usd: Money


class PositionModel(_Open):
    """What was paid and got on the main pair, at what average price."""

    base: str
    quote: str
    bought: Money
    paid: Money
    sold: Money
    proceeds: Money
    average_entry: Money | None
    market_mean: Money | None
    entry_vs_market_percent: Money | None


class HoldingModel(_Open):
    """What is still held of one token, valued."""

    token: str
    quantity: Money
    cost_usd: Money
    price_usd: Money | None
    value_usd: Money | None
    unrealised_usd: Money | None


class PnlSummaryModel(_Open):
    """The accounting of one strategy or one wallet over the window."""

    strategy: str = Field(description="The strategy's name, or the wallet's address.")
    cost_basis: str
    valued_at: str
    totals: FiguresModel
    position: PositionModel | None
    holdings: list[HoldingModel]
    value_usd: Money | None
    realised_usd: Money
    unrealised_usd: Money | None
    pnl_usd: Money | None
    buckets: list[dict[str, Any]]


class PnlAnswer(BaseModel):
    """P&L per strategy and per wallet from the accounting (docs/accounting.md)."""

    start: datetime | None = Field(serialization_alias="from")
    end: datetime | None = Field(serialization_alias="to")
    by: str | None
    time_zone: str
    cost_basis: str
    valued_at: datetime | None
    strategies: list[PnlSummaryModel]
    wallets: list[PnlSummaryModel]
    symbols: dict[str, str] = Field(
        default_factory=dict, description="Each token the figures name → its symbol, if known."
    )


class CommandModel(BaseModel):
    """One request queued for the daemon and what became of it."""

    id: int
    kind: str
    state: str
    payload: dict[str, Any]
    created_at: datetime
    updated_at: datetime
    result: str | None


class CommandsAnswer(BaseModel):
    """The most recent commands, newest first."""

    items: list[CommandModel]


class CommandAccepted(BaseModel):
    """A control queued for the daemon: follow it at `url`."""

    command_id: int
    kind: str
    state: str
    url: str


class CancelBody(BaseModel):
    """Which order to cancel when its id alone is ambiguous (both kinds)."""

    model_config = ConfigDict(extra="forbid")

    kind: OrderKind | None = None


class RemoteBotModel(BaseModel):
    """A remote bot as this console last reached it (read-only; `state` ok or why not)."""

    name: str
    state: Literal["ok", "unreachable", "refused", "invalid", "unavailable"]
    problem: str | None
    checked_at: datetime | None
    status: StatusAnswer | None
    wallets: list[PnlSummaryModel]
    open_orders: OrdersPage | None


class RemotesAnswer(BaseModel):
    """Every configured remote bot."""

    items: list[RemoteBotModel]
