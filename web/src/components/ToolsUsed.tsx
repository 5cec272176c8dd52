import { useT } from '../i18n/use-t';
import type { StreamingTool } from '../stores/chat-stream';

/**
 * One compact line naming the tools an answer used (or is using), for chat pages whose replies are prose for a
 * patient or researcher: enough to see that the agent looked something up, without the step-by-step tool list of
 * the agent run page. A failed call is marked; its error stays in the trace.
 */
export function ToolsUsed({ tools }: { tools: StreamingTool[] }) {
  const t = useT();
  if (tools.length === 0) return null;
  const isUsing = tools.some((tool) => tool.status === 'running');
  const names = [...new Set(tools.map((tool) => tool.name))];
  return (
    <p className="muted small tools-used" data-testid="tools-used" data-tools={names.join(' ')}>
      {t(isUsing ? 'stream.toolsUsing' : 'stream.toolsUsed')}
      {names.map((name, index) => {
        const calls = tools.filter((tool) => tool.name === name);
        const status = calls.some((tool) => tool.status === 'failed') ? 'failed' : calls.some((tool) => tool.status === 'running') ? 'running' : 'ok';
        return (
          <span key={name}>
            {index > 0 ? ' ' : null}
            <code className={`tool-chip tool-chip-${status}`} data-status={status} title={t(`stream.tool.${status}`)}>
              {name}
            </code>
          </span>
        );
      })}
    </p>
  );
}
