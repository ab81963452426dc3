"""The on-chain signer: keys, the node client, the signer policy, sequence numbers, signing.

`Signer.execute(tx_data, intent)` turns the provider's `txData` into a committed Aptos
transaction: allowlist and caps before signing, simulated effects judged by the policy, the
hash recorded before sending, exactly-once submission resolved by hash and ledger time.
See docs/ARCHITECTURE.md (`chain` may import `aptos`, `money`, `config`, `logging`).
"""

from bot.chain.dryrun import ArgumentView, DryRunReport
from bot.chain.errors import (
    AccountNotFound,
    ChainError,
    ChainIdMismatch,
    ConfigurationError,
    ForeignSigner,
    InvalidTxData,
    KeyFileError,
    KeyMismatch,
    MalformedNodeResponse,
    MempoolFull,
    NodeError,
    NodeRateLimited,
    NodeUnavailable,
    NotSent,
    PolicyRefused,
    Refused,
    SequenceTooOld,
    SimulationFailed,
    SubmitOutcomeUnknown,
    TransactionExpired,
    TransactionFailed,
    TransactionOutcomeError,
    TransactionRejected,
    WalletPaused,
)
from bot.chain.keys import account_address, load_private_key, new_key_file, parse_private_key
from bot.chain.node import NodeClient
from bot.chain.outcome import InMemoryRecorder, OutcomeStatus, TxOutcome, TxRecorder
from bot.chain.policy import ROUTER_FUNCTION, Intent, IntentKind, SignerPolicy
from bot.chain.records import (
    AccountInfo,
    BalanceChange,
    LedgerInfo,
    SimulationResult,
    TxStatus,
)
from bot.chain.sequence import SequenceAllocator
from bot.chain.settings import SignerSettings
from bot.chain.signer import PreparedCall, Signer

__all__ = [
    "ROUTER_FUNCTION",
    "AccountInfo",
    "AccountNotFound",
    "ArgumentView",
    "BalanceChange",
    "ChainError",
    "ChainIdMismatch",
    "ConfigurationError",
    "DryRunReport",
    "ForeignSigner",
    "InMemoryRecorder",
    "Intent",
    "IntentKind",
    "InvalidTxData",
    "KeyFileError",
    "KeyMismatch",
    "LedgerInfo",
    "MalformedNodeResponse",
    "MempoolFull",
    "NodeClient",
    "NodeError",
    "NodeRateLimited",
    "NodeUnavailable",
    "NotSent",
    "OutcomeStatus",
    "PolicyRefused",
    "PreparedCall",
    "Refused",
    "SequenceAllocator",
    "SequenceTooOld",
    "Signer",
    "SignerPolicy",
    "SignerSettings",
    "SimulationFailed",
    "SimulationResult",
    "SubmitOutcomeUnknown",
    "TransactionExpired",
    "TransactionFailed",
    "TransactionOutcomeError",
    "TransactionRejected",
    "TxOutcome",
    "TxRecorder",
    "TxStatus",
    "WalletPaused",
    "account_address",
    "load_private_key",
    "new_key_file",
    "parse_private_key",
]
