"""Errors of the on-chain signer, sorted by what the caller must do next.

```
ChainError                  (a `bot.errors.BotError`, like the API's ApiError)
├── KeyFileError            the key could not be loaded: fix the file or variable (the message
│                           names the file and the problem, never the content)
├── ConfigurationError      the signer's settings are unusable (unknown token in a cap…)
├── Refused                 nothing was signed; retrying the same call cannot help
│   ├── PolicyRefused       the call or its simulated effects break the policy (`fix` says how
│   │                       to allow it, when that is a configuration matter)
│   ├── InvalidTxData       the txData does not fit the function's on-chain ABI
│   ├── ChainIdMismatch     the node is on another chain than `[chain].chain_id`
│   ├── KeyMismatch         the key is not the sender account's authentication key
│   ├── SimulationFailed    the node's simulation failed (`vm_status`)
│   └── WalletPaused        a foreign signer was detected on this wallet: nothing more is
│                           signed for it until the daemon is restarted (`cause`)
├── NodeUnavailable         the node did not answer usably (timeouts, 5xx) on a request that
│   │                       changes nothing: retry later
│   └── NodeNotSent         the request never reached the node: retrying is safe (also a
│                           `bot.errors.NotSent`: catch it by that name, re-exported here)
├── NodeError               the node answered with an error (`status`, `error_code`,
│   │                       `vm_error_code`, `message`)
│   ├── AccountNotFound     the account does not exist on chain: fund it first
│   ├── SequenceTooOld      the sequence number was used elsewhere: resync, then re-sign
│   ├── MempoolFull         507: back off and resend the same bytes
│   ├── NodeRateLimited     429: back off (`retry_after`) and resend the same request
│   └── TransactionRejected the node refused a submitted transaction (400): not executed
├── MalformedNodeResponse   a success status whose body is not what the node contract says
├── SubmitOutcomeUnknown    the transaction may be in the mempool: resolve by `tx_hash`,
│                           never by resubmitting
└── TransactionOutcomeError the transaction's fate is known
    ├── TransactionFailed   committed with `success: false`: gas was spent (`vm_status`,
    │                       `gas_used`, `outcome`)
    ├── TransactionExpired  its sequence number unused at a ledger time past its expiration:
    │                       definitively not executed; may be re-signed with a fresh number
    └── ForeignSigner       its sequence number was used by a transaction the journal does
                            not know: another signer uses this wallet; stop trading it
                            (`sequence_number`, `foreign_hash`, `sender`)
```

No message carries key material: keys are never formatted into one, and the key loader
raises its errors `from None` so no parser's message about the text is chained.
"""

from __future__ import annotations

from typing import Any

from bot.errors import BotError, NotSent

__all__ = [
    "AccountNotFound",
    "ChainError",
    "ChainIdMismatch",
    "ConfigurationError",
    "ForeignSigner",
    "InvalidTxData",
    "KeyFileError",
    "KeyMismatch",
    "MalformedNodeResponse",
    "MempoolFull",
    "NodeError",
    "NodeNotSent",
    "NodeRateLimited",
    "NodeUnavailable",
    "NotSent",
    "PolicyRefused",
    "Refused",
    "SequenceTooOld",
    "SimulationFailed",
    "SubmitOutcomeUnknown",
    "TransactionExpired",
    "TransactionFailed",
    "TransactionOutcomeError",
    "TransactionRejected",
    "WalletPaused",
]


class ChainError(BotError):
    """Base of every error of `bot.chain`."""


class KeyFileError(ChainError):
    """The private key could not be loaded (missing, too open, malformed, ambiguous)."""


class ConfigurationError(ChainError):
    """The signer's settings cannot be used as given (the message names the key)."""


class Refused(ChainError):
    """Nothing was signed; sending the same call again would be refused again."""


class PolicyRefused(Refused):
    """The signer policy refused a call, before signing or on its simulated effects.

    Attributes:
        reason: one line saying what was refused (the exact function id or effect).
        function: the function id of the call, when known.
        fix: how to allow it, when that is a configuration matter (else empty).
    """

    def __init__(self, reason: str, *, function: str = "", fix: str = "") -> None:
        self.reason = reason
        self.function = function
        self.fix = fix
        super().__init__(f"refused: {reason}" + (f"; {fix}" if fix else ""))


class InvalidTxData(Refused):
    """The txData is malformed or does not fit the function's on-chain ABI."""


class ChainIdMismatch(Refused):
    """The node's chain id is not the configured one: the key is never used there."""

    def __init__(self, expected: int, actual: int) -> None:
        self.expected = expected
        self.actual = actual
        super().__init__(
            f"the node is on chain id {actual}, but [chain].chain_id is {expected}; "
            "check [chain].node_url and [chain].chain_id"
        )


class KeyMismatch(Refused):
    """The loaded key cannot sign for the sender account."""


class SimulationFailed(Refused):
    """The node's simulation of the transaction failed; nothing was signed.

    Attributes:
        vm_status: the node's `vm_status` text.
        gas_used: gas the simulation used (0 when unknown).
    """

    def __init__(self, vm_status: str, *, gas_used: int = 0, function: str = "") -> None:
        self.vm_status = vm_status
        self.gas_used = gas_used
        self.function = function
        where = f" of {function}" if function else ""
        super().__init__(f"simulation{where} failed: {vm_status}")


class NodeUnavailable(ChainError):
    """The node did not answer usably (timeout, 5xx, connection lost) a side-effect-free call."""

    def __init__(self, message: str, *, endpoint: str = "") -> None:
        self.endpoint = endpoint
        super().__init__(f"{endpoint}: {message}" if endpoint else message)


class NodeNotSent(NodeUnavailable, NotSent):
    """The request never reached the node (connection refused, connect timeout)."""


class NodeError(ChainError):
    """The node answered with an error status.

    Attributes:
        status: the HTTP status.
        error_code: the node's `error_code` (e.g. `invalid_input`), or "".
        vm_error_code: the node's `vm_error_code`, when it gave one.
        node_message: the node's `message`.
        endpoint: `METHOD path` of the request.
    """

    def __init__(
        self,
        status: int,
        node_message: str,
        *,
        error_code: str = "",
        vm_error_code: int | None = None,
        endpoint: str = "",
    ) -> None:
        self.status = status
        self.node_message = node_message
        self.error_code = error_code
        self.vm_error_code = vm_error_code
        self.endpoint = endpoint
        code = f" {error_code}" if error_code else ""
        vm = f" (vm_error_code {vm_error_code})" if vm_error_code is not None else ""
        where = f"{endpoint}: " if endpoint else ""
        super().__init__(f"{where}HTTP {status}{code}{vm}: {node_message}")


class AccountNotFound(NodeError):
    """The account has never been created on chain (fund it first)."""


class SequenceTooOld(NodeError):
    """The transaction's sequence number is already used: resync from the chain, re-sign."""


class MempoolFull(NodeError):
    """507: the node's mempool is full; back off and resend the same bytes."""


class NodeRateLimited(NodeError):
    """429: too many requests; `retry_after` seconds when the node said."""

    def __init__(self, *args: Any, retry_after: float | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.retry_after = retry_after


class TransactionRejected(NodeError):
    """The node refused a submitted transaction (400): it is not in the mempool."""


class MalformedNodeResponse(ChainError):
    """A success status with a body the node contract does not describe."""

    def __init__(self, message: str, *, endpoint: str = "") -> None:
        self.endpoint = endpoint
        super().__init__(f"{endpoint}: {message}" if endpoint else message)


class SubmitOutcomeUnknown(ChainError):
    """The transaction was sent but no answer came back; it may be in the mempool.

    Resolve it by `tx_hash` (poll `by_hash` until committed or past its expiration); never
    resubmit blindly.
    """

    def __init__(self, tx_hash: str, detail: str = "") -> None:
        self.tx_hash = tx_hash
        self.detail = detail
        tail = f" ({detail})" if detail else ""
        super().__init__(f"outcome of transaction {tx_hash} unknown{tail}; resolve it by hash")


class TransactionOutcomeError(ChainError):
    """The transaction's fate is known and it did not succeed.

    Attributes:
        tx_hash: the transaction's hash.
        outcome: the full outcome record (a `bot.chain.outcome.TxOutcome`), when available.
    """

    def __init__(self, message: str, *, tx_hash: str, outcome: Any = None) -> None:
        self.tx_hash = tx_hash
        self.outcome = outcome
        super().__init__(message)


class TransactionFailed(TransactionOutcomeError):
    """Committed with `success: false`: it aborted, and its gas was spent."""

    def __init__(self, tx_hash: str, vm_status: str, gas_used: int, *, outcome: Any = None):
        self.vm_status = vm_status
        self.gas_used = gas_used
        super().__init__(
            f"transaction {tx_hash} failed on chain: {vm_status} (gas used {gas_used})",
            tx_hash=tx_hash,
            outcome=outcome,
        )


class TransactionExpired(TransactionOutcomeError):
    """Its sequence number unused at a ledger time past its expiration: never executed."""

    def __init__(self, tx_hash: str, expiration_secs: int, *, outcome: Any = None) -> None:
        self.expiration_secs = expiration_secs
        super().__init__(
            f"transaction {tx_hash} expired unexecuted (expiration {expiration_secs})",
            tx_hash=tx_hash,
            outcome=outcome,
        )


class ForeignSigner(TransactionOutcomeError):
    """A sequence number of this wallet was used by a transaction this bot did not sign.

    Another signer (a second bot, a wallet app, a thief holding the key) uses the wallet:
    trading on it must stop. `tx_hash` is our transaction that did not execute because
    of it (empty when the use was found before anything was signed).

    Attributes:
        sender: the wallet.
        sequence_number: the number the foreign transaction used.
        foreign_hash: the foreign transaction's hash.
    """

    def __init__(
        self,
        sender: str,
        sequence_number: int,
        foreign_hash: str,
        *,
        tx_hash: str = "",
        outcome: Any = None,
    ) -> None:
        self.sender = sender
        self.sequence_number = sequence_number
        self.foreign_hash = foreign_hash
        ours = f"; our transaction {tx_hash} did not execute" if tx_hash else ""
        super().__init__(
            f"foreign signer detected: sequence number {sequence_number} of wallet {sender} "
            f"was used by transaction {foreign_hash}, which this bot did not sign{ours}; "
            "trading on this wallet is paused",
            tx_hash=tx_hash,
            outcome=outcome,
        )


class WalletPaused(Refused):
    """Nothing is signed for a wallet on which a foreign signer was detected.

    Attributes:
        cause: the `ForeignSigner` detection that paused it.
    """

    def __init__(self, cause: ForeignSigner) -> None:
        self.cause = cause
        super().__init__(
            f"trading paused on wallet {cause.sender}: sequence number {cause.sequence_number} "
            f"was used by a foreign transaction {cause.foreign_hash}; check who else holds the "
            "key, then restart the daemon"
        )
