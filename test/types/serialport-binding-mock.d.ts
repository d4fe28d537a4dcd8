// @serialport/binding-mock ships its types, but its package.json "exports" does not point at them,
// so TypeScript's NodeNext resolution cannot find them. They are the ones serialport itself
// re-exports through SerialPortMock: name them from there.
declare module '@serialport/binding-mock' {
  import type { SerialPortMock } from 'serialport';
  export const MockBinding: typeof SerialPortMock.binding;
  export type MockPortBinding = Awaited<ReturnType<typeof SerialPortMock.binding.open>>;
}
