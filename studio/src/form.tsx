/**
 * Forms from a JSON Schema's flat `properties` — a tool's `inputSchema`, a form elicitation's
 * `requestedSchema`: strings, numbers, integers, booleans and enums get their own inputs,
 * anything else is typed as JSON. Inputs are uncontrolled; `readFields` reads the form once,
 * when it is sent.
 */

import type { VNode } from 'preact';
import { useId, useRef, useState } from 'preact/hooks';
import type { ElicitationSchema, FieldSchema } from './api.js';
import { messageOf } from './ui.js';

export type Properties = Record<string, FieldSchema>;

export function fieldType(schema: FieldSchema): string {
  if (Array.isArray(schema.enum)) return 'enum';
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  return type ?? 'json';
}

/** The inputs of `properties`, named by property. */
export function SchemaFields(props: { properties: Properties; required: readonly string[] }): VNode {
  const required = new Set(props.required);
  // Two forms on a page may ask for the same names.
  const prefix = useId();
  return (
    <>
      {Object.entries(props.properties).map(([name, schema]) => {
        const type = fieldType(schema);
        const needed = required.has(name);
        const id = `${prefix}-${name}`;
        let input: VNode;
        if (type === 'enum') {
          input = (
            <select id={id} name={name}>
              {needed ? null : <option value="">—</option>}
              {(schema.enum ?? []).map((value) => (
                <option
                  key={JSON.stringify(value)}
                  value={JSON.stringify(value)}
                  selected={value === schema.default}
                >
                  {String(value)}
                </option>
              ))}
            </select>
          );
        } else if (type === 'boolean') {
          input = <input id={id} type="checkbox" name={name} defaultChecked={schema.default === true} />;
        } else if (type === 'number' || type === 'integer') {
          input = (
            <input
              id={id}
              type="number"
              name={name}
              step={type === 'integer' ? '1' : 'any'}
              defaultValue={typeof schema.default === 'number' ? String(schema.default) : ''}
            />
          );
        } else if (type === 'string') {
          input = (
            <input
              id={id}
              type="text"
              name={name}
              defaultValue={typeof schema.default === 'string' ? schema.default : ''}
            />
          );
        } else {
          input = <textarea id={id} name={name} rows={3} placeholder={`${type} as JSON`} />;
        }
        return (
          <label key={name} class="field" htmlFor={id}>
            <span class="fname">
              {schema.title ?? name}
              {needed ? ' *' : ''}
              <span class="dim"> {type}</span>
            </span>
            {input}
            {schema.description ? <span class="dim">{schema.description}</span> : null}
          </label>
        );
      })}
    </>
  );
}

/** The values of the form's fields, typed by the schema; throws when a JSON field is not JSON. */
export function readFields(
  form: HTMLFormElement,
  properties: Properties,
  required: readonly string[],
): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(properties)) {
    const element = form.elements.namedItem(name);
    if (
      !(
        element instanceof HTMLInputElement ||
        element instanceof HTMLSelectElement ||
        element instanceof HTMLTextAreaElement
      )
    )
      continue;
    const type = fieldType(schema);
    const raw = element.value;
    let value: unknown;
    if (type === 'boolean') value = (element as HTMLInputElement).checked;
    else if (type === 'enum') value = raw === '' ? undefined : JSON.parse(raw);
    else if (type === 'number' || type === 'integer') value = raw === '' ? undefined : Number(raw);
    else if (type === 'string') value = raw === '' && !required.includes(name) ? undefined : raw;
    else {
      try {
        value = raw.trim() === '' ? undefined : JSON.parse(raw);
      } catch (error) {
        throw new Error(`${name} is not valid JSON: ${messageOf(error)}`);
      }
    }
    if (value !== undefined) values[name] = value;
  }
  return values;
}

export type ElicitationAction = 'accept' | 'decline' | 'cancel';

/**
 * A form elicitation answered from the page: its message (text), the fields of its
 * `requestedSchema`, and accept / decline / cancel.
 */
export function ElicitationForm(props: {
  message: string;
  schema: ElicitationSchema | undefined;
  answer: (action: ElicitationAction, content?: Record<string, unknown>) => Promise<void>;
  cancellable?: boolean;
}): VNode {
  const form = useRef<HTMLFormElement>(null);
  const [state, setState] = useState<'idle' | 'sending' | { error: string }>('idle');
  const properties = props.schema?.properties ?? {};
  const required = props.schema?.required ?? [];
  const send = async (action: ElicitationAction): Promise<void> => {
    setState('sending');
    try {
      const content =
        action === 'accept' && form.current ? readFields(form.current, properties, required) : undefined;
      await props.answer(action, content);
      setState('idle');
    } catch (error) {
      setState({ error: messageOf(error) });
    }
  };
  return (
    <form
      ref={form}
      class="form elicitation"
      onSubmit={(event) => {
        event.preventDefault();
        void send('accept');
      }}
    >
      <p class="elicitation-message">{props.message}</p>
      <SchemaFields properties={properties} required={required} />
      <div class="row">
        <button type="submit" class="primary" data-answer="accept" disabled={state === 'sending'}>
          Accept
        </button>{' '}
        <button
          type="button"
          data-answer="decline"
          disabled={state === 'sending'}
          onClick={() => void send('decline')}
        >
          Decline
        </button>{' '}
        {props.cancellable === false ? null : (
          <button
            type="button"
            data-answer="cancel"
            disabled={state === 'sending'}
            onClick={() => void send('cancel')}
          >
            Cancel
          </button>
        )}
      </div>
      {typeof state === 'object' ? <p class="error">{state.error}</p> : null}
    </form>
  );
}
