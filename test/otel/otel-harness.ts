import { SpanStatusCode, type Tracer } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { expect } from 'vitest';
import type { Model, ModelRequest, ModelStreamPart } from '../../src/models/model.js';

/** An in-memory trace: a tracer whose finished spans land in `spans()`. No network. */
export interface TestTrace {
  readonly tracer: Tracer;
  spans(): ReadableSpan[];
  /** Every finished span called `name`. */
  named(name: string): ReadableSpan[];
  /** The one finished span called `name` (fails the test otherwise). */
  one(name: string): ReadableSpan;
  /** The finished span that is `span`'s parent, if any. */
  parentOf(span: ReadableSpan): ReadableSpan | undefined;
  /** Names of the finished spans whose parent is `span`, sorted. */
  childNames(span: ReadableSpan): string[];
}

export function testTrace(): TestTrace {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const tracer = provider.getTracer('troupe-test');
  const spans = (): ReadableSpan[] => exporter.getFinishedSpans();
  const named = (name: string) => spans().filter((s) => s.name === name);
  return {
    tracer,
    spans,
    named,
    one(name) {
      const found = named(name);
      expect(found, `spans named '${name}' among ${spans().map((s) => s.name).join(', ')}`).toHaveLength(1);
      return found[0]!;
    },
    parentOf(span) {
      const parentId = span.parentSpanContext?.spanId;
      return parentId ? spans().find((s) => s.spanContext().spanId === parentId) : undefined;
    },
    childNames(span) {
      const id = span.spanContext().spanId;
      return spans()
        .filter((s) => s.parentSpanContext?.spanId === id)
        .map((s) => s.name)
        .sort();
    },
  };
}

/** Start/end of a span in milliseconds since the epoch. */
export function times(span: ReadableSpan): { start: number; end: number } {
  const ms = ([s, ns]: readonly [number, number]) => s * 1000 + ns / 1e6;
  return { start: ms(span.startTime), end: ms(span.endTime) };
}

export function isError(span: ReadableSpan): boolean {
  return span.status.code === SpanStatusCode.ERROR;
}

/** The same replies as `model`, under another name (e.g. the AI SDK adapter's `<provider>:<modelId>`). */
export function renamed(model: Model, name: string): Model {
  return { name, stream: (request: ModelRequest): AsyncIterable<ModelStreamPart> => model.stream(request) };
}
