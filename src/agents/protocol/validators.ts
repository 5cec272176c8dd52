import type { CustomValidator } from '../../runtime/staged/reflexion.js';

/**
 * The Protocol Agent's custom reflexion validators, named by `customValidator` in its configuration. Each answers
 * a message when the check fails.
 */
export const PROTOCOL_VALIDATORS: Readonly<Record<string, CustomValidator>> = {
  /** Per-group numbers, when given, add up to the total (a calculator result edited by hand can drift). */
  groups_add_up(total, stageData) {
    const perGroup = stageData.perGroup;
    if (typeof total !== 'number' || !Array.isArray(perGroup) || !perGroup.length) return undefined;
    if (!perGroup.every((n) => typeof n === 'number' && Number.isFinite(n))) return 'perGroup must be a list of numbers';
    const sum = (perGroup as number[]).reduce((a, b) => a + b, 0);
    return sum === total ? undefined : `the groups (${perGroup.join(' + ')} = ${sum}) do not add up to the total of ${total}`;
  },
};
