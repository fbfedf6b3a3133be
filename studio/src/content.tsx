/**
 * Results as a person reads them: content blocks (text, images, audio, resource links,
 * embedded resources), prompt messages, resource contents, `structuredContent` as a tree —
 * each beside its raw JSON. Media is shown only from inline base64 of a known type; links a
 * server sends are shown as text, never followed.
 */

import type { VNode } from 'preact';
import type { OperationReply } from './api.js';
import { JsonTree, Raw, str } from './ui.js';

type Block = Record<string, unknown> & { type?: string };

const MEDIA_TYPE = /^(image\/(png|jpeg|gif|webp)|audio\/[a-z0-9.+-]+)$/;
const BASE64 = /^[A-Za-z0-9+/=]*$/;

/** A `data:` URL for inline media of a known type, or undefined for anything else. */
export function mediaSource(mimeType: unknown, data: unknown): string | undefined {
  const type = str(mimeType);
  const body = str(data);
  return MEDIA_TYPE.test(type) && BASE64.test(body) ? `data:${type};base64,${body}` : undefined;
}

function Media(props: { kind: 'image' | 'audio'; mimeType: unknown; data: unknown }): VNode {
  const src = mediaSource(props.mimeType, props.data);
  if (src === undefined) return <p class="dim">{`${str(props.mimeType) || props.kind} (not shown)`}</p>;
  return props.kind === 'image' ? (
    <img class="image-block" alt="content from the server" src={src} />
  ) : (
    <audio controls src={src}>
      <track kind="captions" />
    </audio>
  );
}

function ResourceContents(props: { resource: Record<string, unknown> }): VNode {
  const { resource } = props;
  const mimeType = str(resource.mimeType);
  return (
    <div class="resource-block" data-content-uri={str(resource.uri)}>
      <code>{str(resource.uri)}</code> <span class="dim">{mimeType}</span>
      {typeof resource.text === 'string' ? (
        <pre class="text-block">{resource.text}</pre>
      ) : typeof resource.blob === 'string' ? (
        mimeType.startsWith('image/') || mimeType.startsWith('audio/') ? (
          <Media
            kind={mimeType.startsWith('image/') ? 'image' : 'audio'}
            mimeType={mimeType}
            data={resource.blob}
          />
        ) : (
          <p class="dim">{`blob, ${Math.floor((resource.blob.length * 3) / 4)} bytes`}</p>
        )
      ) : null}
    </div>
  );
}

export function ContentBlock(props: { block: Block }): VNode {
  const part = props.block;
  switch (part.type) {
    case 'text':
      return <pre class="text-block">{str(part.text)}</pre>;
    case 'image':
      return <Media kind="image" mimeType={part.mimeType} data={part.data} />;
    case 'audio':
      return <Media kind="audio" mimeType={part.mimeType} data={part.data} />;
    case 'resource_link':
      return (
        <div class="link-block" data-link={str(part.uri)}>
          🔗 <code>{str(part.uri)}</code> {str(part.name)} <span class="dim">{str(part.description)}</span>
        </div>
      );
    case 'resource':
      return <ResourceContents resource={(part.resource ?? {}) as Record<string, unknown>} />;
    default:
      return <JsonTree value={part} label={str(part.type) || 'content'} open={false} />;
  }
}

function Failure(props: { reply: Extract<OperationReply, { ok: false }>; what: string }): VNode {
  const { error } = props.reply;
  const denied = error.code === 'authorization_denied';
  return (
    <div class="result" data-result={denied ? 'denied' : 'error'}>
      <h3 class="error">{denied ? 'Denied by authorizeToolCall' : `The ${props.what} failed`}</h3>
      <p class="error" data-error={error.code ?? 'error'}>
        {`${error.code ?? error.name ?? 'error'}: ${error.message}`}
      </p>
    </div>
  );
}

const blocksOf = (value: unknown): Block[] => (Array.isArray(value) ? (value as Block[]) : []);

/** A tool's CallToolResult. */
export function ToolResult(props: { reply: OperationReply }): VNode {
  const { reply } = props;
  if (!reply.ok) return <Failure reply={reply} what="call" />;
  const result = reply.result;
  const isError = result.isError === true;
  return (
    <div class="result" data-result={isError ? 'tool-error' : 'ok'}>
      <h3>
        {isError ? 'The tool reported an error' : 'Result'}
        <span class="dim"> {reply.ms} ms</span>
      </h3>
      <div class="content">
        {blocksOf(result.content).map((block, i) => (
          <ContentBlock key={i} block={block} />
        ))}
      </div>
      {result.structuredContent === undefined ? null : (
        <JsonTree value={result.structuredContent} label="structuredContent" />
      )}
      <Raw value={result} />
    </div>
  );
}

/** A GetPromptResult: its messages, each with its role. */
export function PromptResult(props: { reply: OperationReply }): VNode {
  const { reply } = props;
  if (!reply.ok) return <Failure reply={reply} what="prompt" />;
  const messages = Array.isArray(reply.result.messages)
    ? (reply.result.messages as { role?: string; content?: Block | Block[] }[])
    : [];
  return (
    <div class="result" data-result="ok">
      <h3>
        {str(reply.result.description) || 'Prompt'}
        <span class="dim"> {reply.ms} ms</span>
      </h3>
      {messages.map((message, i) => (
        <div key={i} class="message" data-role={str(message.role)}>
          <span class="badge">{str(message.role) || '?'}</span>
          {(Array.isArray(message.content) ? message.content : [message.content ?? {}]).map((block, j) => (
            <ContentBlock key={j} block={block} />
          ))}
        </div>
      ))}
      <Raw value={reply.result} />
    </div>
  );
}

/** A ReadResourceResult: every content it holds. */
export function ReadResult(props: { reply: OperationReply }): VNode {
  const { reply } = props;
  if (!reply.ok) return <Failure reply={reply} what="read" />;
  const contents = Array.isArray(reply.result.contents)
    ? (reply.result.contents as Record<string, unknown>[])
    : [];
  return (
    <div class="result" data-result="ok">
      <h3>
        {`${contents.length} content${contents.length === 1 ? '' : 's'}`}
        <span class="dim"> {reply.ms} ms</span>
      </h3>
      {contents.map((content, i) => (
        <ResourceContents key={i} resource={content} />
      ))}
      <Raw value={reply.result} />
    </div>
  );
}
