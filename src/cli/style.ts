/** Terminal colours, only when stdout is a terminal and NO_COLOR is unset. */
const enabled = process.stdout.isTTY === true && !process.env.NO_COLOR;

const paint = (code: number) => (text: string) => (enabled ? `\u001b[${code}m${text}\u001b[0m` : text);

export const style = {
  bold: paint(1),
  dim: paint(2),
  red: paint(31),
  green: paint(32),
  yellow: paint(33),
  blue: paint(34),
  magenta: paint(35),
  cyan: paint(36),
};
