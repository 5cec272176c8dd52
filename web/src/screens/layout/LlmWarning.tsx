import { useT } from '../../i18n/use-t';
import { useHealthStore } from '../../stores/health';

/** Without a model every agent run fails; say so before the user types a question, naming what to set. */
export function LlmWarning() {
  const t = useT();
  const health = useHealthStore((state) => state.health);
  if (!health || health.llm.configured) return null;
  const missing = health.llm.missing;
  return (
    <div className="alert alert-warning banner" role="alert" data-testid="llm-warning">
      {missing.length > 0 ? t('health.llmMissing', { vars: missing.join(', ') }) : t('health.llmMissingGeneric')}
    </div>
  );
}
