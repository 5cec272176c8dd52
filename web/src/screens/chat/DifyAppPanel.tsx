import type { Scenario } from '../../api';
import { useT } from '../../i18n/use-t';

/** A start-form value being typed: its variable name and text. */
export interface StartFormRow {
  name: string;
  value: string;
}

interface DifyAppPanelProps {
  engine: Scenario['engine'];
  rows: StartFormRow[];
  onChange(rows: StartFormRow[]): void;
  disabled?: boolean;
}

/**
 * What a Dify scenario runs on (the app's mode and host: its prompt, tools and knowledge live in Dify, so there
 * is no document scope here), and the start-form values the next run sends. A row left empty sends nothing, so
 * the scenario's own value (engine.inputs) applies.
 */
export function DifyAppPanel({ engine, rows, onChange, disabled }: DifyAppPanelProps) {
  const t = useT();
  const update = (index: number, row: Partial<StartFormRow>) => onChange(rows.map((old, i) => (i === index ? { ...old, ...row } : old)));
  return (
    <section className="panel dify-app" data-testid="dify-app">
      <h2 className="panel-title">{t('chat.difyApp')}</h2>
      <p className="small" data-testid="dify-engine">
        {t('scenarios.engineDifyOn', { mode: engine.appMode ?? 'chat', host: engine.host ?? '' })}
      </p>
      <p className="muted small">{t('scenarios.difyHint')}</p>
      <h3 className="panel-subtitle">{t('chat.startForm')}</h3>
      <p className="muted small">{t('chat.startFormHint')}</p>
      <ul className="start-form">
        {rows.map((row, index) => (
          <li key={index} className="start-form-row">
            <input
              aria-label={t('chat.startFormName')}
              placeholder={t('chat.startFormName')}
              value={row.name}
              disabled={disabled}
              data-testid="start-form-name"
              onChange={(event) => update(index, { name: event.target.value })}
            />
            <input
              aria-label={t('chat.startFormValue')}
              placeholder={engine.inputNames?.includes(row.name) ? t('chat.startFormScenarioValue') : t('chat.startFormValue')}
              value={row.value}
              disabled={disabled}
              data-testid="start-form-value"
              onChange={(event) => update(index, { value: event.target.value })}
            />
          </li>
        ))}
      </ul>
      <button type="button" className="button button-small" disabled={disabled} data-testid="start-form-add" onClick={() => onChange([...rows, { name: '', value: '' }])}>
        {t('chat.startFormAdd')}
      </button>
    </section>
  );
}

/** The rows as the run's `inputs`: named rows with a value; none gives undefined (the scenario's values alone). */
export function startFormInputs(rows: StartFormRow[]): Record<string, string> | undefined {
  const filled = rows.filter((row) => row.name.trim() && row.value !== '');
  return filled.length ? Object.fromEntries(filled.map((row) => [row.name.trim(), row.value])) : undefined;
}
