import type { SkillValidation } from '../../../api/skills-api';
import { useT } from '../../../i18n/use-t';

/** What validation found, each problem at its path; a suggestion replaces the misspelt word in the editor. */
export function SkillProblems({ validation, onSuggestion }: { validation: SkillValidation; onSuggestion(word: string, suggestion: string): void }) {
  const t = useT();
  return (
    <div className="panel" data-testid="skill-problems" data-valid={validation.valid}>
      {validation.problems.length === 0 ? <p className="muted">{t('skillEditor.valid')}</p> : <strong>{t('skillEditor.problems', { count: validation.problems.length })}</strong>}
      <ul className="small skill-problems-list">
        {validation.problems.map((problem) => (
          <li key={`${problem.path}\u0000${problem.message}`} data-testid="skill-problem">
            <code>{problem.path}</code> {problem.message}{' '}
            {problem.suggestion && problem.word ? (
              <button type="button" className="button button-small" data-testid="skill-suggestion" onClick={() => onSuggestion(problem.word!, problem.suggestion!)}>
                {t('skillEditor.suggestion', { suggestion: problem.suggestion })}
              </button>
            ) : null}
          </li>
        ))}
      </ul>
      {validation.notes.map((note) => (
        <p key={note} className="muted small">
          {note}
        </p>
      ))}
    </div>
  );
}
