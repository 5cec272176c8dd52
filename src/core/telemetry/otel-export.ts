import { AsyncLocalStorage } from 'node:async_hooks';
import { ROOT_CONTEXT, SpanStatusCode, trace, type Span, type Tracer } from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, RandomIdGenerator, TracerProvider, type IdGenerator, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace';
import { ATTR_ERROR_TYPE, ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import { errorMessage } from '../errors.js';
import type { Logger } from '../logger.js';
import type { SecretRegistry } from '../secrets.js';
import type { ExportedRun, ExportedStep, TraceExportSink } from '../trace/store.js';
import { errorType, runEndAttributes, runSpan, stepEndAttributes, stepSpan, type ContentText } from './gen-ai-attributes.js';
import type { TelemetryConfig } from './otel-config.js';

/** The sink the trace store sends to, and what the context calls on shutdown. */
export interface TelemetryExport extends TraceExportSink {
  /** Sends every span ended so far now; never rejects. */
  flush(): Promise<void>;
  /** Sends what is left and stops; call it after the trace store's close (closeContext). Never rejects. */
  shutdown(): Promise<void>;
}

export interface TelemetryDeps {
  logger: Logger;
  /** The process's secret registry: masks keys in content and in logged export errors. */
  secrets: SecretRegistry;
  /**
   * The product's identifier masker, applied to every content value before it is turned into text (captured content
   * only; nothing else leaves). Passed in by the composition root: the masker lives above core.
   */
  withoutIdentifiers: (value: unknown) => unknown;
  serviceVersion?: string;
}

/**
 * A span attribute longer than this is cut: a prompt with a whole protocol in it would otherwise make one span
 * megabytes, and receivers drop oversized batches whole (Jaeger's default limit is 4 MB per request).
 */
const MAX_CONTENT_CHARS = 16_000;

/**
 * The trace id of the product's traces (a UUID, `traceId` in API answers and GET /api/traces/:id) as an OTel trace id:
 * the same 128 bits, the 32 hex digits without the dashes. A receiver's trace id is thus read back as the product's
 * by putting the dashes in at 8-4-4-4-12.
 */
export function otelTraceId(traceId: string): string | undefined {
  const hex = traceId.replace(/-/g, '').toLowerCase();
  return /^[0-9a-f]{32}$/.test(hex) && !/^0+$/.test(hex) ? hex : undefined;
}

/**
 * Ids for new spans; the root span of a run takes the run's own trace id. `startSpan` is synchronous, so setting the
 * id just before it and clearing it just after cannot hand it to another run's span.
 */
class RunTraceIds implements IdGenerator {
  next: string | undefined;
  private readonly random = new RandomIdGenerator();
  generateTraceId = (): string => this.next ?? this.random.generateTraceId();
  generateSpanId = (): string => this.random.generateSpanId();
}

/**
 * OTLP/HTTP export of the trace store's runs and steps (docs/telemetry.md). Spans go through the SDK's
 * BatchSpanProcessor: ended spans are queued (at most 2048; beyond that new ones are dropped, never waited for) and
 * sent in batches off the request path, so a slow or absent receiver never slows nor fails a run; a failed export
 * is logged once at warn until one succeeds again. Only built when configured (context.ts imports this module then).
 */
export function openTelemetryExport(config: TelemetryConfig, deps: TelemetryDeps): TelemetryExport {
  const { logger, secrets } = deps;
  // Header values carry API keys (Langfuse's Basic auth): masked wherever they might be echoed.
  secrets.add(...Object.values(config.headers));
  const ids = new RunTraceIds();
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: config.serviceName, ...(deps.serviceVersion ? { [ATTR_SERVICE_VERSION]: deps.serviceVersion } : {}) }),
    idGenerator: ids,
    spanProcessors: [new BatchSpanProcessor({ exporter: warningOnFailure(new OTLPTraceExporter({ url: config.tracesUrl, headers: config.headers, timeoutMillis: config.timeoutMs }), config, deps), exportTimeoutMillis: config.timeoutMs })],
  });
  const tracer = provider.getTracer('clinagent', deps.serviceVersion);
  // Identifiers first (the masker reads keys and values), then keys and tokens in the text that results.
  const content: ContentText | undefined = config.captureContent ? (value) => clip(secrets.redact(JSON.stringify(deps.withoutIdentifiers(value)) ?? 'null')) : undefined;
  const contentMessage = (message: string): string => clip(secrets.redact(String(deps.withoutIdentifiers(message))));
  logger.info({ receiver: config.tracesUrl, serviceName: config.serviceName, captureContent: config.captureContent }, 'OpenTelemetry: runs, model calls and tool calls are also sent as OTLP spans');
  // The step whose work is running now, per async call chain: steps it starts are its children. A step of another
  // run (a run started inside a tool) is not: that run is a trace of its own, whose steps hang from its root.
  const current = new AsyncLocalStorage<{ run: ExportedRun; span: Span }>();

  let faultLogged = false;
  /** Exporting is never a run's business: a fault here is logged once and the run goes on without its span. */
  function guarded<T>(what: string, fallback: T, work: () => T): T {
    try {
      return work();
    } catch (error) {
      if (!faultLogged) logger.warn({ error: secrets.redact(errorMessage(error)) }, `OpenTelemetry: could not ${what}; runs go on, without that span`);
      faultLogged = true;
      return fallback;
    }
  }

  function startRun(run: Parameters<TraceExportSink['startRun']>[0]): ExportedRun {
    const root = guarded('start a run span', undefined, () => {
      const shape = runSpan(run, content);
      ids.next = otelTraceId(run.traceId);
      try {
        return tracer.startSpan(shape.name, { root: true, attributes: shape.attributes, startTime: run.startedAt }, ROOT_CONTEXT);
      } finally {
        ids.next = undefined;
      }
    });
    const handle: ExportedRun = {
      startStep(kind, name, input, startedAt) {
        const within = current.getStore();
        const parent = within?.run === handle ? within.span : root;
        const span = guarded('start a step span', undefined, () => {
          const shape = stepSpan(kind, name, input, content);
          return tracer.startSpan(shape.name, { attributes: shape.attributes, startTime: startedAt }, parent ? trace.setSpan(ROOT_CONTEXT, parent) : ROOT_CONTEXT);
        });
        return step(span, kind, handle);
      },
      end(outcome) {
        if (!root) return;
        guarded('end a run span', undefined, () => {
          root.setAttributes(runEndAttributes(outcome, content));
          if (outcome.status === 'failed') failed(root, errorType('run', undefined), outcome.error);
          root.end(outcome.endedAt);
        });
      },
    };
    return handle;
  }

  function step(span: Span | undefined, kind: Parameters<ExportedRun['startStep']>[0], run: ExportedRun): ExportedStep {
    return {
      within: (fn) => (span ? current.run({ run, span }, fn) : fn()),
      end(outcome, endedAt, thrown) {
        if (!span) return;
        guarded('end a step span', undefined, () => {
          span.setAttributes(stepEndAttributes(kind, outcome, content));
          if ((outcome.status ?? (outcome.error ? 'failed' : 'success')) === 'failed') failed(span, errorType(kind, thrown), outcome.error);
          span.end(endedAt);
        });
      },
    };
  }

  function failed(span: Span, type: string, message: string | undefined): void {
    span.setAttribute(ATTR_ERROR_TYPE, type);
    // The message may quote a prompt or a record value ("unknown field(s) ..."): content, so only when captured.
    span.setStatus({ code: SpanStatusCode.ERROR, ...(content && message ? { message: contentMessage(message) } : {}) });
  }

  return {
    startRun,
    flush: () => provider.forceFlush().catch((error: unknown) => logger.warn({ error: secrets.redact(errorMessage(error)) }, 'OpenTelemetry: flushing spans failed')),
    shutdown: () => provider.shutdown().catch((error: unknown) => logger.warn({ error: secrets.redact(errorMessage(error)) }, 'OpenTelemetry: shutting the exporter down failed')),
  };
}

const clip = (text: string): string => (text.length > MAX_CONTENT_CHARS ? `${text.slice(0, MAX_CONTENT_CHARS)}... (${text.length} characters in all, cut here)` : text);

/**
 * The OTLP exporter reports a failed batch to its callback only; this says so in the log, once per outage (the first
 * failure after a success), with the receiver's URL and what went wrong, never the spans or the headers.
 */
function warningOnFailure(exporter: SpanExporter, config: TelemetryConfig, deps: TelemetryDeps): SpanExporter {
  let failing = false;
  return {
    export(spans: ReadableSpan[], done: (result: ExportResult) => void) {
      exporter.export(spans, (result) => {
        if (result.code === ExportResultCode.SUCCESS) {
          if (failing) deps.logger.info({ receiver: config.tracesUrl }, 'OpenTelemetry: spans are reaching the receiver again');
          failing = false;
        } else if (!failing) {
          failing = true;
          deps.logger.warn(
            { receiver: config.tracesUrl, error: deps.secrets.redact(result.error ? errorMessage(result.error) : 'unknown error'), spans: spans.length },
            'OpenTelemetry: could not send spans to the OTLP receiver; runs go on and these spans are dropped. Check OTEL_EXPORTER_OTLP_ENDPOINT and that the receiver is up (logged once until it works again)',
          );
        }
        done(result);
      });
    },
    shutdown: () => exporter.shutdown(),
    forceFlush: () => exporter.forceFlush?.() ?? Promise.resolve(),
  };
}
