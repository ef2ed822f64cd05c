// The custody log's public entry (evidence/custody/README.md documents it).
export { CustodyStore, type CustodyAppend } from './custody-store.ts';
export { CUSTODY_KINDS, GENESIS_HASH, canonicalJson, entryHash, verifyEntries, type ChainVerdict, type CustodyEntry, type CustodyEntryBody, type CustodyKind } from './chain.ts';
export { custodyRoutes } from './routes.ts';
