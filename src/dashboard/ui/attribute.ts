/**
 * A URL (or any text) for an attribute of the dashboard's JSX, its `&` written `&amp;`. @kitajs/html
 * escapes only `"` in attribute values: a query's `?a=1&b=2` reached the HTML with a raw `&`, which a
 * parser reads as the start of a character reference (`&copy=` is `©=` outside an attribute, `&quot;`
 * is `"` inside one). Its `<` and `'` need nothing inside the double quotes kitajs writes.
 */
export const inAttribute = (value: string): string => value.replaceAll('&', '&amp;');
