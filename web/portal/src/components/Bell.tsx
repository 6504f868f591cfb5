export function Bell() {
  return null;
}
