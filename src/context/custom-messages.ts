/**
 * Custom message roles (CubePi / pi-agent-core): messages the model does not know live in
 * the transcript; the `transformContext` and `convertToModel` steps make the model's view.
 */
import { UserError } from '../errors.js';
import type { CustomMessage, Message, ModelMessage } from '../types.js';

/** The roles models know (and `system`, which run input turns into instructions): no custom message may take them. */
export const MODEL_ROLES: ReadonlySet<string> = new Set(['system', 'user', 'assistant', 'tool']);

/** Whether `message` has a role the model does not know. */
export function isCustomMessage(message: { readonly role: string }): message is CustomMessage {
  return !MODEL_ROLES.has(message.role);
}

/**
 * A custom message: `role` any non-empty string the model does not know, `content` its text,
 * `data` optional JSON for the application (no augmentation of CustomMessageRoles needed).
 * @throws UserError for a model role, an empty role, non-string content or data that is not JSON.
 */
export function customMessage<Role extends string>(role: Role, content: string, data?: unknown): CustomMessage<Role> {
  return checkCustomMessage(data === undefined ? { role, content } : { role, content, data }, 'customMessage') as unknown as CustomMessage<Role>;
}

/**
 * `value` as a custom message (a copy: data through JSON). @throws UserError naming `where`.
 */
export function checkCustomMessage(value: { readonly role?: unknown; readonly content?: unknown; readonly data?: unknown }, where: string): Message {
  const { role, content, data } = value;
  if (typeof role !== 'string' || role === '') throw new UserError(`${where}: a custom message needs a role (a non-empty string), got ${JSON.stringify(role)}.`);
  if (MODEL_ROLES.has(role)) throw new UserError(`${where}: '${role}' is a role the model knows, not a custom one.`);
  if (typeof content !== 'string') throw new UserError(`${where}: a custom message (role '${role}') needs string content.`);
  if (data === undefined) return { role, content } as unknown as Message;
  let text: string | undefined;
  try {
    text = JSON.stringify(data);
  } catch (error) {
    throw new UserError(`${where}: the data of a custom message (role '${role}') cannot be written as JSON: ${(error as Error).message}.`);
  }
  if (text === undefined) throw new UserError(`${where}: the data of a custom message (role '${role}') cannot be written as JSON.`);
  return { role, content, data: JSON.parse(text) as unknown } as unknown as Message;
}

/** The default convertToModel: the model sees every message of a role it knows, and none of the others. */
export function dropCustomMessages(messages: readonly Message[]): ModelMessage[] {
  return messages.filter((m): m is ModelMessage => !isCustomMessage(m));
}
