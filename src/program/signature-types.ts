/**
 * Type-level reading of signature literals, so `ax('question:string -> answer:string,
 * tags:string[]')` is typed `AxGen<{ question: string }, { answer: string; tags: string[] }>`.
 * A signature held in a `string` variable types as `Record<string, unknown>`; descriptions
 * with escaped quotes may confuse the type (the runtime parser is exact): give the types
 * explicitly then.
 */

type Space = ' ' | '\n' | '\t' | '\r';
type TrimStart<S extends string> = S extends `${Space}${infer R}` ? TrimStart<R> : S;
type TrimEnd<S extends string> = S extends `${infer R}${Space}` ? TrimEnd<R> : S;
type Trim<S extends string> = TrimEnd<TrimStart<S>>;

type CommaMark = '\u0001';
type ColonMark = '\u0002';
type ArrowMark = '\u0003';

type Swap<S extends string, From extends string, To extends string> = S extends `${infer A}${From}${infer B}`
  ? `${A}${To}${Swap<B, From, To>}`
  : S;

/** Hide `,`, `:` and `->` inside quoted text from the splitters below. */
type Mask<Q extends string> = Swap<Swap<Swap<Q, ',', CommaMark>, ':', ColonMark>, '->', ArrowMark>;
type Unmask<Q extends string> = Swap<Swap<Swap<Q, CommaMark, ','>, ColonMark, ':'>, ArrowMark, '->'>;
type Protect<S extends string> = S extends `${infer A}"${infer Q}"${infer B}`
  ? `${A}"${Mask<Q>}"${Protect<B>}`
  : S;

type Split<S extends string, D extends string> = S extends `${infer H}${D}${infer T}`
  ? [H, ...Split<T, D>]
  : [S];

type DropDescription<S extends string> = Trim<S> extends `"${string}"${infer Rest}` ? Rest : S;

type RawName<F extends string> = F extends `${infer N}:${string}`
  ? Trim<N>
  : F extends `${infer N}"${string}`
    ? Trim<N>
    : Trim<F>;
type FieldName<F extends string> = RawName<F> extends `${infer N}?` ? N : RawName<F>;
type IsOptional<F extends string> = RawName<F> extends `${string}?` ? true : false;

type ClassValues<R extends string> =
  Trim<R> extends `"${infer Q}"${string}` ? Trim<Unmask<Split<Q, CommaMark>[number]>> : string;

type Scalar<T extends string> = T extends `string${string}`
  ? string
  : T extends `number${string}`
    ? number
    : T extends `boolean${string}`
      ? boolean
      : unknown;

type FieldValue<F extends string> = F extends `${string}:${infer T}`
  ? Trim<T> extends `class[]${infer R}`
    ? ClassValues<R>[]
    : Trim<T> extends `class${infer R}`
      ? ClassValues<R>
      : Trim<T> extends `${'string' | 'number' | 'boolean' | 'json'}[]${string}`
        ? Scalar<Trim<T>>[]
        : Scalar<Trim<T>>
  : string;

type Simplify<T> = { [K in keyof T]: T[K] } & {};

type FieldsObject<F extends string> = Simplify<
  { [K in F as IsOptional<K> extends true ? never : FieldName<K>]: FieldValue<K> } & {
    [K in F as IsOptional<K> extends true ? FieldName<K> : never]?: FieldValue<K>;
  }
>;

type Sides<S extends string> = Protect<S> extends `${infer I}->${infer O}` ? [DropDescription<I>, O] : never;

/** The input object type a signature literal declares. */
export type AxSignatureInputs<S extends string> = string extends S
  ? Record<string, unknown>
  : Sides<S> extends [infer I extends string, string]
    ? FieldsObject<Split<I, ','>[number]>
    : Record<string, unknown>;

/** The output object type a signature literal declares. */
export type AxSignatureOutputs<S extends string> = string extends S
  ? Record<string, unknown>
  : Sides<S> extends [string, infer O extends string]
    ? FieldsObject<Split<O, ','>[number]>
    : Record<string, unknown>;
