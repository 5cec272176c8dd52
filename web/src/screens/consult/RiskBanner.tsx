import type { ConsultSession } from '../../api';
import { useT } from '../../i18n/use-t';
import { useLiveTurn } from '../../stores/consult';
import { lastAnswer, leadAdvice, riskTone } from './risk';

/**
 * The risk level the consult's safety check computed, said plainly, with the advice the reply led with (so the banner
 * and the chat say the same, in the patient's language): urgent in red with its red flags; a reply without a lead
 * (a low level) shows what the level means.
 */
export function RiskBanner({ session }: { session: ConsultSession }) {
  const t = useT();
  // While a reply is on screen but not yet among the turns, its advice is the current one.
  const liveResponse = useLiveTurn()?.result?.response;
  // Before the patient has said anything there is nothing to assess: "low" would be a claim, not a finding.
  if (session.turns.length === 0 && liveResponse === undefined) return null;
  const level = session.riskLevel;
  const tone = riskTone(level);
  const led = level === 'low' ? null : leadAdvice(liveResponse ?? lastAnswer(session.turns));
  const advice = led ?? (level === 'urgent' ? t('consult.risk.seekCareNow') : t(`consult.risk.${level}.meaning`));
  return (
    <section className={tone.className} role={tone.role} aria-label={t('consult.risk.label')} data-testid="risk-banner" data-level={level}>
      <strong className="risk-title">{t('consult.risk.title', { level: t(`consult.risk.${level}`) })}</strong>
      <p className="risk-advice">{advice}</p>
      {session.redFlags.length > 0 ? (
        <div>
          <span className="small">{t('consult.risk.redFlags')}</span>
          <ul className="risk-flags" aria-label={t('consult.risk.redFlags')}>
            {session.redFlags.map((flag) => (
              <li key={flag.id}>{flag.description}</li>
            ))}
          </ul>
        </div>
      ) : null}
    </section>
  );
}
