// Access to a stored chain at the HTTP edge (SPEC §1, §13): chains are addressed by their
// `chain_<hex>` id, which is also the id permission grants name.
import type { ChainStore, StoredChain } from '../db/chain-store';
import { Forbidden, NotFound } from '../domain/errors';
import { can, type Action, type Principal } from '../domain/permissions';

const CHAIN_ID = /^chain_[0-9a-f]{24}$/;

/**
 * A chain the key may act on. Not a chain id, missing, or unreadable for a read or a delete
 * → 404 (like prompts); a missing write/execute permission on an existing chain → 403 (SPEC §1).
 */
export async function loadChain(
  chains: ChainStore,
  principal: Principal,
  chainId: unknown,
  action: Action,
): Promise<StoredChain> {
  const id = String(chainId);
  const chain = CHAIN_ID.test(id) ? await chains.get(id) : null;
  if (!chain) throw new NotFound(`Chain ${id} not found`);
  const object = { id: chain.id, ownerKeyId: chain.ownerKeyId };
  if (!can(principal, action, 'chains', object)) {
    if (action === 'read' || (action === 'write' && !can(principal, 'read', 'chains', object)))
      throw new NotFound(`Chain ${id} not found`);
    throw new Forbidden(`API key lacks ${action} permission on chain ${id}`);
  }
  return chain;
}
