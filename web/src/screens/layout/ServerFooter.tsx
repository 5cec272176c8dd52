import { useT } from '../../i18n/use-t';
import { useHealthStore } from '../../stores/health';

export function ServerFooter() {
  const t = useT();
  const health = useHealthStore((state) => state.health);
  const error = useHealthStore((state) => state.error);
  let text: string = t('app.tagline');
  if (health) {
    const embedding = health.embedding.local
      ? t('health.embeddingLocal', { model: health.embedding.model })
      : health.embedding.model;
    text = t('health.footer', {
      version: health.version,
      database: health.database,
      model: health.llm.model || '—',
      embedding,
    });
  } else if (error) {
    text = t('health.unavailable');
  }
  return <footer className="app-footer">{text}</footer>;
}
