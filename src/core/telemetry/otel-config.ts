import { ClinAgentError } from '../errors.js';

/**
 * Where and how a run's spans are sent over OTLP/HTTP, read from the standard OpenTelemetry variables
 * (https://opentelemetry.io/docs/specs/otel/protocol/exporter/ and .../configuration/sdk-environment-variables/).
 * Undefined when no endpoint is set, or OTEL_SDK_DISABLED=true: then nothing is loaded nor sent.
 */
export interface TelemetryConfig {
  /** The full URL spans are POSTed to (…/v1/traces). */
  tracesUrl: string;
  /** Sent with every export (an API key, Basic auth for Langfuse): secrets, masked in logs and traces. */
  headers: Record<string, string>;
  serviceName: string;
  timeoutMs: number;
  /** OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true: prompts, answers, tool arguments and results, identifiers removed. */
  captureContent: boolean;
}

/** The variables as config.ts parsed them (trimmed; empty is unset). */
export interface TelemetryEnv {
  OTEL_SDK_DISABLED?: string;
  OTEL_EXPORTER_OTLP_ENDPOINT?: string;
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?: string;
  OTEL_EXPORTER_OTLP_HEADERS?: string;
  OTEL_EXPORTER_OTLP_TRACES_HEADERS?: string;
  OTEL_EXPORTER_OTLP_TIMEOUT?: string;
  OTEL_EXPORTER_OTLP_TRACES_TIMEOUT?: string;
  OTEL_SERVICE_NAME?: string;
  OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT?: string;
}

/** The spec's default export timeout: a receiver that hangs holds a batch (never a run) this long. */
const DEFAULT_TIMEOUT_MS = 10_000;

export function telemetryConfig(env: TelemetryEnv): TelemetryConfig | undefined {
  if (env.OTEL_SDK_DISABLED?.toLowerCase() === 'true') return undefined;
  const tracesUrl = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? signalUrl(env.OTEL_EXPORTER_OTLP_ENDPOINT);
  if (!tracesUrl) return undefined;
  return {
    tracesUrl: httpUrl(tracesUrl, env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ? 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' : 'OTEL_EXPORTER_OTLP_ENDPOINT'),
    // The spec: signal-specific headers are added to the general ones, and win where both name a header.
    headers: { ...parseHeaders(env.OTEL_EXPORTER_OTLP_HEADERS, 'OTEL_EXPORTER_OTLP_HEADERS'), ...parseHeaders(env.OTEL_EXPORTER_OTLP_TRACES_HEADERS, 'OTEL_EXPORTER_OTLP_TRACES_HEADERS') },
    serviceName: env.OTEL_SERVICE_NAME ?? 'clinagent',
    timeoutMs: timeout(env.OTEL_EXPORTER_OTLP_TRACES_TIMEOUT, 'OTEL_EXPORTER_OTLP_TRACES_TIMEOUT') ?? timeout(env.OTEL_EXPORTER_OTLP_TIMEOUT, 'OTEL_EXPORTER_OTLP_TIMEOUT') ?? DEFAULT_TIMEOUT_MS,
    captureContent: env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT?.toLowerCase() === 'true',
  };
}

/** The spec: the general endpoint is a base, to which `v1/traces` is appended (the per-signal one is used as is). */
function signalUrl(base: string | undefined): string | undefined {
  if (!base) return undefined;
  return `${base.replace(/\/+$/, '')}/v1/traces`;
}

function httpUrl(value: string, variable: string): string {
  try {
    const url = new URL(value);
    if (url.protocol === 'http:' || url.protocol === 'https:') return value;
  } catch {
    // reported below
  }
  throw new ClinAgentError('CONFIG_INVALID', `${variable} must be an http(s) URL of an OTLP/HTTP receiver, e.g. http://127.0.0.1:4318 (Jaeger, Tempo, an OpenTelemetry Collector) or https://cloud.langfuse.com/api/public/otel.`, { field: variable });
}

/** `key1=value1,key2=value2`, values URL-encoded (W3C Baggage format, as the spec says). */
function parseHeaders(value: string | undefined, variable: string): Record<string, string> {
  const headers: Record<string, string> = {};
  if (!value) return headers;
  for (const pair of value.split(',')) {
    if (!pair.trim()) continue;
    const at = pair.indexOf('=');
    const key = at > 0 ? pair.slice(0, at).trim() : '';
    if (!/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(key)) {
      // The value may be a key: the message names the variable and the entry's position, never its text.
      throw new ClinAgentError('CONFIG_INVALID', `${variable} must be comma-separated key=value pairs with URL-encoded values, e.g. "Authorization=Basic%20cGs6c2s=,x-scope-orgid=tenant1"; entry ${value.split(',').indexOf(pair) + 1} has no valid header name before "=".`, { field: variable });
    }
    headers[key] = decode(pair.slice(at + 1).trim());
  }
  return headers;
}

function decode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

function timeout(value: string | undefined, variable: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < 100) {
    throw new ClinAgentError('CONFIG_INVALID', `${variable} must be a whole number of milliseconds of at least 100, e.g. 10000.`, { field: variable });
  }
  return Number(value);
}
