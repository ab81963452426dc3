"""Pure Aptos knowledge, no I/O: identities, Move types, the BCS codec and transactions."""
