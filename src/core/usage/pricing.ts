/**
 * What a turn cost, from the tokens each model reported and the config's price table (USD per million
 * tokens, by model name as configured). A model the table does not list makes the cost unknown (null)
 * rather than understated.
 */

export interface ModelPrice {
  /** USD per million prompt tokens. */
  input: number;
  /** USD per million completion tokens. */
  output: number;
}

export type PriceTable = Readonly<Record<string, ModelPrice>>;

/** Tokens one model spent. */
export interface ModelTokens {
  model: string;
  promptTokens: number;
  completionTokens: number;
}

const perMillion = 1_000_000;

/** The price of `model`, if the table has one (own keys only: `constructor` is not a model). */
export function priceOf(prices: PriceTable, model: string): ModelPrice | undefined {
  return Object.hasOwn(prices, model) ? prices[model] : undefined;
}

/** USD for `parts`; null when there are none or any part's model has no price. */
export function costOf(parts: readonly ModelTokens[], prices: PriceTable): number | null {
  if (parts.length === 0) return null;
  let cost = 0;
  for (const part of parts) {
    const price = priceOf(prices, part.model);
    if (!price) return null;
    cost += (part.promptTokens * price.input + part.completionTokens * price.output) / perMillion;
  }
  return cost;
}
