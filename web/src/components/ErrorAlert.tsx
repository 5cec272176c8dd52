import type { ReactNode } from 'react';
import { errorText } from '../i18n/error-text';
import { useT } from '../i18n/use-t';

interface ErrorAlertProps {
  error: unknown;
  title?: string;
  testId?: string;
  action?: ReactNode;
}

/** Shows the server's actionable message (or a translated one for network failures) as an alert. */
export function ErrorAlert({ error, title, testId, action }: ErrorAlertProps) {
  const t = useT();
  return (
    <div className="alert alert-error" role="alert" data-testid={testId}>
      {title ? <strong className="alert-title">{title}</strong> : null}
      <span className="alert-text">{errorText(error, t)}</span>
      {action ? <span className="alert-action">{action}</span> : null}
    </div>
  );
}
