import { describe, expect, it } from 'vitest';
import { loadConfig } from '../config.js';
import { ClinAgentError } from '../errors.js';
import { telemetryConfig } from './otel-config.js';

/** The standard OpenTelemetry variables read as the OTLP exporter specification says. */
describe('telemetryConfig', () => {
  it('is off without an endpoint, whatever else is set, and when OTEL_SDK_DISABLED=true', () => {
    expect(telemetryConfig({ OTEL_SERVICE_NAME: 'x', OTEL_EXPORTER_OTLP_HEADERS: 'a=b', OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true' })).toBeUndefined();
    expect(telemetryConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'true' })).toBeUndefined();
    expect(loadConfig({}).telemetry).toBeUndefined();
  });

  it('appends v1/traces to the general endpoint and uses the traces endpoint as it is', () => {
    expect(telemetryConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })?.tracesUrl).toBe('http://127.0.0.1:4318/v1/traces');
    expect(telemetryConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://cloud.langfuse.com/api/public/otel/' })?.tracesUrl).toBe('https://cloud.langfuse.com/api/public/otel/v1/traces');
    expect(telemetryConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://b:9999/custom' })?.tracesUrl).toBe('http://b:9999/custom');
  });

  it('reads headers as URL-encoded key=value pairs, the traces ones winning, and defaults the rest', () => {
    const config = telemetryConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318',
      OTEL_EXPORTER_OTLP_HEADERS: 'Authorization=Basic%20cGstbGY6c2stbGY=, x-scope-orgid=general',
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-scope-orgid=traces',
    });
    expect(config).toEqual({ tracesUrl: 'http://127.0.0.1:4318/v1/traces', headers: { Authorization: 'Basic cGstbGY6c2stbGY=', 'x-scope-orgid': 'traces' }, serviceName: 'clinagent', timeoutMs: 10_000, captureContent: false });
    expect(telemetryConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://h', OTEL_EXPORTER_OTLP_TIMEOUT: '2500', OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'TRUE', OTEL_SERVICE_NAME: 'trials' })).toMatchObject({ timeoutMs: 2500, captureContent: true, serviceName: 'trials' });
  });

  it('refuses a bad endpoint, header list or timeout, naming the variable and never the header value', () => {
    const failure = (env: Record<string, string>) => {
      try {
        telemetryConfig(env);
      } catch (error) {
        return error as ClinAgentError;
      }
      throw new Error('expected a configuration error');
    };
    expect(failure({ OTEL_EXPORTER_OTLP_ENDPOINT: 'grpc://127.0.0.1:4317' })).toMatchObject({ code: 'CONFIG_INVALID', details: { field: 'OTEL_EXPORTER_OTLP_ENDPOINT' } });
    const headers = failure({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://h', OTEL_EXPORTER_OTLP_HEADERS: 'ok=1,Basic secret-value-123' });
    expect(headers).toMatchObject({ code: 'CONFIG_INVALID', details: { field: 'OTEL_EXPORTER_OTLP_HEADERS' } });
    expect(headers.message).toContain('entry 2');
    expect(headers.message).not.toContain('secret-value-123');
    expect(failure({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://h', OTEL_EXPORTER_OTLP_TIMEOUT: '10s' })).toMatchObject({ details: { field: 'OTEL_EXPORTER_OTLP_TIMEOUT' } });
  });
});
