import type { OpenApiDocument } from '../../api';
import { CollapsibleJson, JsonView } from '../../components/JsonView';
import { useT } from '../../i18n/use-t';
import type { OperationEntry } from './list-operations';
import { resolveRefs } from './resolve-refs';

/** The schema of the first content type (the API speaks JSON; multipart uploads have one form schema). */
function firstSchema(content: Record<string, { schema?: unknown }> | undefined): { type: string; schema: unknown } | null {
  const [type, media] = Object.entries(content ?? {})[0] ?? [];
  return type && media ? { type, schema: media.schema } : null;
}

export function OperationCard({ entry, document }: { entry: OperationEntry; document: OpenApiDocument }) {
  const t = useT();
  const { method, path, operation } = entry;
  const body = firstSchema(operation.requestBody?.content);
  const parameters = operation.parameters ?? [];

  return (
    <details className="operation" data-testid="api-operation">
      <summary className="operation-summary">
        <span className={`method method-${method}`}>{method.toUpperCase()}</span>
        <code className="operation-path">{path}</code>
        <span className="operation-title">{operation.summary ?? ''}</span>
      </summary>
      <div className="operation-body">
        {operation.description ? <p className="operation-description">{operation.description}</p> : null}

        {parameters.length > 0 ? (
          <section>
            <h4>{t('apiDocs.parameters')}</h4>
            <ul className="param-list">
              {parameters.map((param) => (
                <li key={`${param.in}-${param.name}`}>
                  <code>{param.name}</code> <span className="tag">{param.in}</span>
                  {param.required ? <span className="tag tag-required">{t('apiDocs.required')}</span> : null}
                  {param.description ? <span className="muted"> — {param.description}</span> : null}
                </li>
              ))}
            </ul>
          </section>
        ) : null}

        {body ? (
          <section>
            <h4>
              {t('apiDocs.requestBody')} <span className="muted small">{body.type}</span>
              {operation.requestBody?.required ? <span className="tag tag-required">{t('apiDocs.required')}</span> : null}
            </h4>
            <CollapsibleJson label={t('common.showJson')} value={resolveRefs(body.schema, document)} open />
          </section>
        ) : null}

        <section>
          <h4>{t('apiDocs.responses')}</h4>
          {Object.entries(operation.responses ?? {}).map(([status, response]) => {
            const schema = firstSchema(response.content);
            const label = (
              <>
                <span className={`status-code status-${status.charAt(0)}xx`}>{status}</span> {response.description ?? ''}
              </>
            );
            // A response with a schema expands to show it; one without is a plain line.
            return schema ? (
              <details className="response collapsible" key={status}>
                <summary>{label}</summary>
                <JsonView value={resolveRefs(schema.schema, document)} />
              </details>
            ) : (
              <div className="response" key={status}>
                {label} <span className="muted small">· {t('apiDocs.noSchema')}</span>
              </div>
            );
          })}
        </section>
      </div>
    </details>
  );
}
