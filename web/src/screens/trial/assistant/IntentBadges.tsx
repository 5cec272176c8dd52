import { useT } from '../../../i18n/use-t';
import { badgeTone, type IntentBadge } from '../../../stores/assistant-stream';
import { intentBadgeLabel } from './intent-label';

/** What the router made of the message: one small badge per intent, with how it was handled once known. */
export function IntentBadges({ badges }: { badges: IntentBadge[] }) {
  const t = useT();
  if (badges.length === 0) return null;
  return (
    <span className="intent-badges">
      {badges.map((badge, index) => (
        <span key={index} className={`badge badge-${badgeTone(badge)}`} data-testid="intent-badge" data-intent={badge.type} data-ending={badge.ending}>
          {intentBadgeLabel(t, badge)}
        </span>
      ))}
    </span>
  );
}
