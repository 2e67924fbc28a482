// Access to a stored chain at the HTTP edge (SPEC §1, §13): chains are addressed by their
// `chain_<hex>` id, which is also the id permission grants name.
import type { ChainStore, StoredChain } from '../db/chain-store';
import type { Action, Principal } from '../domain/permissions';
import { loadSeedObject } from './access';

const CHAIN_ID = /^chain_[0-9a-f]{24}$/;

/**
 * A chain the key may act on. Not a chain id, missing, or unreadable for a read or a delete
 * → 404 (like prompts); a missing write/execute permission on an existing chain → 403 (SPEC §1).
 */
export function loadChain(
  chains: ChainStore,
  principal: Principal,
  chainId: unknown,
  action: Action,
): Promise<StoredChain> {
  const id = String(chainId);
  return loadSeedObject(
    principal,
    action,
    'chains',
    'chain',
    id,
    (chain) => (CHAIN_ID.test(chain) ? chains.get(chain) : Promise.resolve(null)),
    (chain) => chain.id,
  );
}
