import { RE2JS } from 're2js';
import type { StageConfig } from './config.js';
import { calculatingCards } from './card-results.js';
import { checkRulePattern } from './reflexion.js';

/**
 * A result a tool computes (a sample size) that the reply states in words without the tool: each card's
 * `resultClaimPattern` finds the statements ("about 60 per group", "120 in total"); a number in one that no
 * computed result holds is a claim of the model's, which the user is told is not calculated.
 */

const NUMBER = /\d[\d,]*(?:\.\d+)?/g;

function numbersIn(text: string): number[] {
  return [...text.matchAll(NUMBER)].map((m) => Number(m[0].replaceAll(',', ''))).filter(Number.isFinite);
}

interface StatedResult {
  /** The statements whose numbers no computed result holds, as written. */
  statements: string[];
  /** The tools that should have computed them. */
  tools: string[];
}

/** `computed`: what the tools computed this turn and what the context already holds from them, as values. */
export function uncalculatedStatements(stage: StageConfig, reply: string, computed: readonly unknown[]): StatedResult {
  const known = new Set(numbersIn(JSON.stringify(computed)));
  const statements: string[] = [];
  const tools: string[] = [];
  for (const card of calculatingCards(stage)) {
    if (!card.resultClaimPattern) continue;
    const checked = checkRulePattern(card.resultClaimPattern);
    if (!checked.regex) continue;
    const matcher = RE2JS.compile(checked.regex.pattern(), RE2JS.CASE_INSENSITIVE).matcher(reply);
    let found = false;
    while (matcher.find()) {
      const statement = matcher.group(0) ?? '';
      if (numbersIn(statement).some((n) => !known.has(n))) {
        statements.push(statement.trim());
        found = true;
      }
    }
    if (found && !tools.includes(card.resultTool!)) tools.push(card.resultTool!);
  }
  return { statements, tools };
}
