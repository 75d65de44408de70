/** D1 binds at most this many parameters in one statement. */
export const D1_MAX_PARAMS = 100;

/**
 * How many rows (or ids) one statement can carry when each binds `perItem` parameters and the
 * statement binds up to `others` more of its own. Every multi-row INSERT and `IN (...)` list sizes
 * its parts with this.
 */
export function itemsPerStatement(perItem: number, others = 0): number {
  return Math.floor((D1_MAX_PARAMS - others) / perItem);
}
