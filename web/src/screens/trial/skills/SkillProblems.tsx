import { useMemo } from 'react';
import type { SkillValidation } from '../../../api/skills-api';
import { useT } from '../../../i18n/use-t';
import { problemSpans } from './problem-lines';

interface SkillProblemsProps {
  validation: SkillValidation;
  /** The editor's text, to name each problem's line (the same lines the editor marks). */
  text: string;
  /** Absent for a reader who cannot change the skill. */
  onSuggestion?(word: string, suggestion: string): void;
  onGoToLine(line: number): void;
}

/** What validation found, each problem at its line and path; a suggestion replaces the misspelt word in the editor. */
export function SkillProblems({ validation, text, onSuggestion, onGoToLine }: SkillProblemsProps) {
  const t = useT();
  const spans = useMemo(() => problemSpans(text, validation.problems.map((problem) => problem.path)), [text, validation]);
  return (
    <div className="panel" data-testid="skill-problems" data-valid={validation.valid}>
      {validation.problems.length === 0 ? <p className="muted">{t('skillEditor.valid')}</p> : <strong>{t('skillEditor.problems', { count: validation.problems.length })}</strong>}
      <ul className="small skill-problems-list">
        {validation.problems.map((problem, index) => {
          const line = spans[index]?.line;
          return (
            <li key={`${problem.path}\u0000${problem.message}`} data-testid="skill-problem" data-line={line ?? ''}>
              {line ? (
                <button type="button" className="button button-small button-ghost" data-testid="skill-problem-line" onClick={() => onGoToLine(line)}>
                  {t('skillEditor.line', { line })}
                </button>
              ) : null}{' '}
              {/* A YAML error's path is its line and column, which the message and the line button already say. */}
              {problem.path.startsWith('line ') ? null : <code>{problem.path}</code>} {problem.message}{' '}
              {problem.suggestion && problem.word && onSuggestion ? (
                <button type="button" className="button button-small" data-testid="skill-suggestion" onClick={() => onSuggestion(problem.word!, problem.suggestion!)}>
                  {t('skillEditor.suggestion', { suggestion: problem.suggestion })}
                </button>
              ) : null}
            </li>
          );
        })}
      </ul>
      {validation.notes.map((note) => (
        <p key={note} className="muted small">
          {note}
        </p>
      ))}
    </div>
  );
}
