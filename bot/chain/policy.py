"""The signer policy: what may be signed, judged before signing and on the simulation.

Before signing (`check_call`): the function must be on the allowlist (by default only the
provider's router); the intended spend must fit the per-transaction cap of its token; the
quoted slippage must not exceed `[risk].max_slippage_percent`; traded tokens must be in
`[risk].allowed_tokens` when that list is set.

On the arguments that will be signed (`check_arguments`, after the ABI decoded them): a
router swap must sell exactly the intended amount (ExactOut: at most the bot's maximum, and
within the per-transaction cap: the cap counts what is signed), ask the chain for at least
the bot's own minimum, pay the bought token to the intended recipient, and carry no
integrator fee unless one is configured to the user's own address (`bot.chain.router_terms`
says which positions are read, and why). A deposit or withdraw must name its order.

On the simulation (`check_effects`), by effects rather than argument positions (nobody
outside the provider knows which of the router's 20 arguments is the recipient):

* the sender's balances may fall only in the sold token, by at most the intended amount plus
  the quoted fees; a swap or deposit may not touch any third token of the sender. The gas
  fee is judged apart (below): balance changes leave it out, as the paper node reports them
  (`gas_in_balance_changes=True` accepts a node that folds the fee into the sender's APT
  delta, allowing exactly `gas_used × gas_unit_price` more);
* a swap must raise the recipient's (default: the sender's) balance of the bought token by
  at least the quote's minimum;
* a deposit may move the sold token only to the order's escrow (when named);
* the simulated gas must fit `[risk].max_gas_amount`;
* a simulation without balance changes the policy can judge is refused.

Every refusal raises `PolicyRefused` with a one-line reason (and the fix when it is a
configuration matter). Amounts are integer base units throughout.
"""

from __future__ import annotations

import contextlib
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import ROUND_FLOOR, Decimal, localcontext
from typing import Any, Final

from bot import domain
from bot.aptos.address import Address, AddressError, FunctionId
from bot.aptos.tokens import Token, TokenBook, TokenLookupError
from bot.chain.errors import ConfigurationError, PolicyRefused
from bot.chain.intent import Intent, IntentKind
from bot.chain.records import SimulationResult
from bot.chain.router_terms import RouterTerms, RouterTermsError
from bot.config import ChainSettings, RiskSettings
from bot.domain import APT_COIN_TYPE, APT_FA_ADDRESS

__all__ = [
    "APT_COIN_TYPE",
    "APT_FA_ADDRESS",
    "ROUTER_FUNCTION",
    "Intent",
    "IntentKind",
    "SignerPolicy",
    "function_of",
    "names_order",
]

ROUTER_FUNCTION: Final = FunctionId.parse(domain.ROUTER_FUNCTION)
"""The router's entry function, parsed (its one spelling is `bot.domain.ROUTER_FUNCTION`)."""
GAS_TOKEN_KEYS: Final = frozenset({APT_COIN_TYPE, APT_FA_ADDRESS})
_ALLOWLIST_KEY: Final = "[chain].allowed_functions"


def function_of(tx_data: Mapping[str, Any]) -> FunctionId:
    """The function id a txData calls.

    Raises:
        PolicyRefused: when `function` is missing or not `address::module::function`.
    """
    text = tx_data.get("function") if isinstance(tx_data, Mapping) else None
    if not isinstance(text, str):
        raise PolicyRefused("the txData has no function id")
    try:
        return FunctionId.parse(text)
    except AddressError:
        raise PolicyRefused(f"the txData's function {text[:120]!r} is not a function id") from None


def _name(token: Token) -> str:
    return f"{token.symbol} ({token.address})"


def _caps_fix(token: Token) -> str:
    return f"raise [risk].per_transaction_caps for {token.symbol} if this is intended"


@dataclass(frozen=True)
class SignerPolicy:
    """The rules checked before anything is signed (see the module docstring).

    Attributes:
        chain_id: the only chain id the key may sign for (`[chain].chain_id`).
        allowed_functions: entry functions that may be called.
        per_tx_caps: token key → most base units one transaction may spend.
        max_slippage_percent: from `[risk]`.
        max_gas_amount: gas units one transaction may use (`[risk].max_gas_amount`).
        allowed_tokens: token keys that may be traded (empty: any token).
        gas_in_balance_changes: whether the node's balance changes include the gas fee in
            the sender's APT delta (the paper node's do not).
        integrator: the user's own integrator fee receiver and the most it may take (in
            percent × 10^4); None: a router call must carry no integrator fee.
    """

    chain_id: int
    allowed_functions: frozenset[FunctionId] = frozenset({ROUTER_FUNCTION})
    per_tx_caps: Mapping[str, int] = field(default_factory=dict)
    max_slippage_percent: Decimal = Decimal(1)
    max_gas_amount: int = 200_000
    allowed_tokens: frozenset[str] = frozenset()
    gas_token_keys: frozenset[str] = GAS_TOKEN_KEYS
    gas_in_balance_changes: bool = False
    integrator: tuple[Address, int] | None = None

    @classmethod
    def from_settings(
        cls,
        chain: ChainSettings,
        risk: RiskSettings,
        tokens: TokenBook,
        *,
        allowed_functions: Iterable[str] | None = None,
        extra_functions: Iterable[str] = (),
    ) -> SignerPolicy:
        """Build from `[chain]`, `[risk]` and the token list (for caps in human units).

        Args:
            chain: `[chain]` (chain id; `allowed_functions` once the config has it).
            risk: `[risk]` (caps, slippage, gas budget, allowed tokens).
            tokens: the token list, to resolve cap and allowlist names and decimals.
            allowed_functions: the whole allowlist; default `[chain].allowed_functions`
                when the config has it, else the provider's router.
            extra_functions: added to the allowlist (e.g. the configured order modules).

        Raises:
            ConfigurationError: an unknown or ambiguous token, or a malformed function id.
        """
        configured = allowed_functions
        if configured is None:
            configured = getattr(chain, "allowed_functions", None) or [str(ROUTER_FUNCTION)]
        functions: set[FunctionId] = set()
        for text in [*configured, *extra_functions]:
            try:
                functions.add(FunctionId.parse(text))
            except AddressError as exc:
                raise ConfigurationError(f"{_ALLOWLIST_KEY}: {exc}") from None
        caps: dict[str, int] = {}
        for name, cap in risk.per_transaction_caps.items():
            token = _find(tokens, name, "[risk].per_transaction_caps")
            with localcontext() as ctx:
                ctx.prec = 100
                units = int(cap.scaleb(token.decimals).to_integral_value(rounding=ROUND_FLOOR))
            caps.update(dict.fromkeys(token.keys, units))
        allowed = frozenset(
            key
            for name in risk.allowed_tokens
            for key in _find(tokens, name, "[risk].allowed_tokens").keys
        )
        return cls(
            chain_id=chain.chain_id,
            allowed_functions=frozenset(functions),
            per_tx_caps=caps,
            max_slippage_percent=risk.max_slippage_percent,
            max_gas_amount=risk.max_gas_amount,
            allowed_tokens=allowed,
        )

    # --- before signing ---------------------------------------------------------------

    def check_function(self, tx_data: Mapping[str, Any]) -> FunctionId:
        """The call's function id, if it is on the allowlist.

        Raises:
            PolicyRefused: naming the exact function id and how to allowlist it.
        """
        function = function_of(tx_data)
        if function not in self.allowed_functions:
            raise PolicyRefused(
                f"function {function} is not on the allowlist",
                function=str(function),
                fix=f'to allow it, add "{function}" to {_ALLOWLIST_KEY}',
            )
        return function

    def check_call(self, tx_data: Mapping[str, Any], intent: Intent) -> FunctionId:
        """Allowlist, intent consistency, token allowlist, per-transaction cap, slippage.

        Raises:
            PolicyRefused: with a one-line reason.
        """
        function = self.check_function(tx_data)
        where = str(function)
        selling = intent.kind in (IntentKind.SWAP, IntentKind.DEPOSIT)
        if selling and (intent.sell is None or intent.sell_amount <= 0):
            raise PolicyRefused(f"a {intent.kind} needs a sold token and an amount", function=where)
        if intent.kind is IntentKind.SWAP:
            if intent.buy is None or intent.min_out <= 0:
                raise PolicyRefused(
                    "a swap needs a bought token and a minimum out above 0", function=where
                )
            if intent.sell is not None and set(intent.sell.keys) & set(intent.buy.keys):
                raise PolicyRefused(f"a swap of {_name(intent.sell)} into itself", function=where)
        for token in (intent.sell, intent.buy):
            if (
                token is not None
                and self.allowed_tokens
                and not set(token.keys) & self.allowed_tokens
            ):
                raise PolicyRefused(
                    f"token {_name(token)} is not in [risk].allowed_tokens",
                    function=where,
                    fix=f"add {token.symbol} to [risk].allowed_tokens if this is intended",
                )
        if intent.sell is not None:
            self._check_cap(intent.sell, intent.sell_amount + intent.fee_amount, where)
        self._check_slippage(intent, where)
        return function

    def _check_cap(self, token: Token, spend: int, where: str) -> None:
        cap = self.cap_for(token)
        if cap is not None and spend > cap:
            raise PolicyRefused(
                f"spends {spend} base units of {_name(token)}, over the per-transaction "
                f"cap of {cap}",
                function=where,
                fix=_caps_fix(token),
            )

    def check_arguments(self, function: FunctionId, arguments: list[Any], intent: Intent) -> None:
        """Hold the arguments that will be signed to the intent (see the module docstring).

        `arguments` are the canonical JSON values the function's ABI decoded from the
        payload (`bot.aptos.codec`), so this judges exactly the signed bytes.

        Raises:
            PolicyRefused: with a one-line reason.
        """
        where = str(function)
        if intent.kind is IntentKind.SWAP and function == ROUTER_FUNCTION:
            self._check_router(arguments, intent, where)
        if intent.order_id is not None and not names_order(arguments, intent.order_id):
            raise PolicyRefused(
                f"the {intent.kind} call does not name order {intent.order_id}", function=where
            )

    def _check_router(self, arguments: list[Any], intent: Intent, where: str) -> None:
        try:
            terms = RouterTerms.read(arguments)
        except RouterTermsError as exc:
            raise PolicyRefused(
                f"the router call cannot be judged: {exc}", function=where
            ) from None
        sold = intent.sell_amount
        if intent.exact_out and terms.amount_in > sold:
            raise PolicyRefused(
                f"the router call may sell {terms.amount_in} base units, more than the bot's "
                f"maximum {sold}",
                function=where,
            )
        if not intent.exact_out and terms.amount_in != sold:
            raise PolicyRefused(
                f"the router call sells {terms.amount_in} base units, not the intended {sold}",
                function=where,
            )
        if intent.sell is not None:
            self._check_cap(intent.sell, terms.amount_in, where)
        if intent.exact_out and terms.amount_out != intent.min_out:
            raise PolicyRefused(
                f"the router call buys {terms.amount_out} base units, not the intended "
                f"{intent.min_out}",
                function=where,
            )
        if terms.amount_out < intent.min_out:
            raise PolicyRefused(
                f"the router call's minimum out {terms.amount_out} is below the bot's own "
                f"minimum {intent.min_out}",
                function=where,
            )
        if terms.recipient != intent.receiver:
            raise PolicyRefused(
                f"the router call pays {terms.recipient}, not the recipient {intent.receiver}",
                function=where,
            )
        self._check_integrator(terms, where)

    def _check_integrator(self, terms: RouterTerms, where: str) -> None:
        if terms.integrator_fee_word == 0:
            return
        fee = f"an integrator fee (word {terms.integrator_fee_word}) to {terms.integrator}"
        if self.integrator is None:
            raise PolicyRefused(f"the router call pays {fee}; none is configured", function=where)
        receiver, most = self.integrator
        if terms.integrator != receiver or terms.integrator_fee_e4 > most:
            raise PolicyRefused(
                f"the router call pays {fee}, not at most {most} (percent × 10^4) to the "
                f"configured {receiver}",
                function=where,
            )

    def cap_for(self, token: Token) -> int | None:
        """The per-transaction cap of a token in base units (the tightest of its keys), or None."""
        caps = [self.per_tx_caps[k] for k in token.keys if k in self.per_tx_caps]
        return min(caps) if caps else None

    def _check_slippage(self, intent: Intent, where: str) -> None:
        fix = "raise [risk].max_slippage_percent if this is intended"
        limit = self.max_slippage_percent
        if intent.slippage_percent is not None and intent.slippage_percent > limit:
            raise PolicyRefused(
                f"slippage {intent.slippage_percent}% is above the maximum {limit}%",
                function=where,
                fix=fix,
            )
        expected = intent.expected_out
        if intent.kind is not IntentKind.SWAP or not expected:
            return
        with localcontext() as ctx:
            ctx.prec = 100
            # The least minimum allowed is expected × (1 − limit / 100), exactly, rounded
            # down to a whole base unit as the provider rounds its minimum.
            least = (Decimal(expected) * (100 - limit) / 100).to_integral_value(ROUND_FLOOR)
            over = intent.min_out < least
        if over:
            raise PolicyRefused(
                f"the minimum out {intent.min_out} is more than {limit}% below the expected "
                f"{expected}",
                function=where,
                fix=fix,
            )

    # --- on the simulation ------------------------------------------------------------

    def check_effects(
        self, simulation: SimulationResult, intent: Intent, *, function: str = ""
    ) -> None:
        """Judge the simulated effects against the intent (see the module docstring).

        Raises:
            PolicyRefused: naming the offending account, token and amount.
        """
        if simulation.gas_used > self.max_gas_amount:
            raise PolicyRefused(
                f"simulated gas {simulation.gas_used} is over the budget of {self.max_gas_amount}",
                function=function,
                fix="raise [risk].max_gas_amount if this is intended",
            )
        changes = simulation.balance_changes
        if changes is None:
            raise PolicyRefused(
                "the simulation reports no balance changes the policy can judge "
                "(the node gave no balance_changes)",
                function=function,
            )
        totals: dict[tuple[Address, str], int] = defaultdict(int)
        for change in changes:
            totals[(change.account, self._role(change.asset, intent))] += change.delta
        gas_fee = simulation.gas_fee if self.gas_in_balance_changes else 0
        self._check_sender(totals, intent, gas_fee, function)
        if intent.kind is IntentKind.SWAP:
            self._check_bought(totals, intent, gas_fee, function)
        elif intent.kind is IntentKind.DEPOSIT and intent.escrow is not None:
            self._check_escrow(totals, intent, function)

    def _role(self, asset: str, intent: Intent) -> str:
        if intent.sell is not None and asset in intent.sell.keys:
            return "sell"
        if intent.buy is not None and asset in intent.buy.keys:
            return "buy"
        if asset in self.gas_token_keys:
            return "gas"
        return asset

    def _is_gas(self, token: Token | None) -> bool:
        return token is not None and bool(set(token.keys) & self.gas_token_keys)

    def _check_sender(
        self, totals: Mapping[tuple[Address, str], int], intent: Intent, gas_fee: int, where: str
    ) -> None:
        sender = intent.sender
        for (account, role), delta in totals.items():
            if account != sender or delta == 0:
                continue
            if role == "sell" and intent.sell is not None:
                allowed = intent.sell_amount + intent.fee_amount
                allowed += gas_fee if self._is_gas(intent.sell) else 0
                if -delta > allowed:
                    raise PolicyRefused(
                        f"the sender's {_name(intent.sell)} would fall by {-delta} base units, "
                        f"more than the intended {intent.sell_amount} plus fees "
                        f"{intent.fee_amount}",
                        function=where,
                    )
            elif role == "gas":
                if -delta > gas_fee:
                    raise PolicyRefused(
                        f"the sender's APT would fall by {-delta} octas beyond gas "
                        f"(gas fee allowed in balance changes: {gas_fee})",
                        function=where,
                    )
            elif role == "buy" and intent.buy is not None:
                floor = -gas_fee if self._is_gas(intent.buy) else 0
                if delta < floor:
                    raise PolicyRefused(
                        f"the sender's {_name(intent.buy)} would fall by {-delta} base units",
                        function=where,
                    )
            elif delta < 0 or intent.kind is not IntentKind.WITHDRAW:
                raise PolicyRefused(
                    f"the transaction touches a third token of the sender: {role} changes by "
                    f"{delta} base units",
                    function=where,
                )

    def _check_bought(
        self, totals: Mapping[tuple[Address, str], int], intent: Intent, gas_fee: int, where: str
    ) -> None:
        if intent.buy is None:
            raise PolicyRefused("a swap needs a bought token", function=where)
        receiver = intent.receiver
        gain = totals.get((receiver, "buy"), 0)
        if receiver == intent.sender and self._is_gas(intent.buy):
            gain += gas_fee  # the sender's APT delta is net of the gas fee
        if gain >= intent.min_out:
            return
        elsewhere = sorted(
            (
                (account, delta)
                for (account, role), delta in totals.items()
                if role == "buy" and account != receiver and delta > 0
            ),
            key=lambda item: -item[1],
        )
        if elsewhere:
            account, delta = elsewhere[0]
            raise PolicyRefused(
                f"the bought {_name(intent.buy)} goes to {account} ({delta} base units), "
                f"not to the recipient {receiver}",
                function=where,
            )
        raise PolicyRefused(
            f"the recipient {receiver} would gain {gain} base units of {_name(intent.buy)}, "
            f"less than the minimum {intent.min_out}",
            function=where,
        )

    def _check_escrow(
        self, totals: Mapping[tuple[Address, str], int], intent: Intent, where: str
    ) -> None:
        if intent.sell is None or intent.escrow is None:
            raise PolicyRefused("a deposit needs a sold token and an escrow", function=where)
        gain = totals.get((intent.escrow, "sell"), 0)
        if gain < intent.sell_amount:
            raise PolicyRefused(
                f"the escrow {intent.escrow} would receive {gain} base units of "
                f"{_name(intent.sell)}, not the order's {intent.sell_amount}",
                function=where,
            )
        for (account, role), delta in totals.items():
            if (
                role == "sell"
                and delta > intent.fee_amount
                and account not in (intent.escrow, intent.sender)
            ):
                raise PolicyRefused(
                    f"the deposit moves {delta} base units of {_name(intent.sell)} to {account}, "
                    f"not to the escrow {intent.escrow}",
                    function=where,
                )


def _order_forms(order_id: str) -> set[str]:
    """The ways a call may carry an order id: as text, or as `vector<u8>` hex of it."""
    text = order_id.strip().lower()
    forms = {text, "0x" + order_id.encode().hex()}
    with contextlib.suppress(AddressError):
        forms.add(str(Address.parse(text)))
    return forms


def names_order(arguments: Sequence[Any], order_id: str) -> bool:
    """Whether a top-level argument of a call is the order id (as text or `vector<u8>` hex).

    The one rule for "this call names that order": the signer holds a deposit or withdraw
    to it, and reconciliation reads a committed deposit by it.
    """
    forms = _order_forms(order_id)
    for value in arguments:
        if not isinstance(value, str):
            continue
        if value.lower() in forms:
            return True
        try:
            if str(Address.parse(value)) in forms:
                return True
        except AddressError:
            continue
    return False


def _find(tokens: TokenBook, name: str, key: str) -> Token:
    try:
        return tokens.find(name)
    except TokenLookupError as exc:
        raise ConfigurationError(f"{key}: {exc}") from None
