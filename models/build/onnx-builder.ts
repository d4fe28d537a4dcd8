/**
 * A small, deterministic ONNX writer on top of onnx-proto: the same inputs always give the same
 * bytes (no timestamps, no random names), so the committed models can be checked byte for byte.
 */
import onnxProto from 'onnx-proto';

const { onnx } = onnxProto as unknown as typeof import('onnx-proto');

export const OPSET = 13;
export const IR_VERSION = 7;

/** A float32 tensor initializer (raw little-endian data). */
export function floatTensor(name: string, dims: number[], values: Float32Array): import('onnx-proto').onnx.ITensorProto {
  const expected = dims.reduce((a, b) => a * b, 1);
  if (values.length !== expected) throw new Error(`tensor ${name}: ${values.length} values for dims ${dims.join('×')}`);
  const raw = new Uint8Array(values.length * 4);
  const view = new DataView(raw.buffer);
  for (let i = 0; i < values.length; i++) view.setFloat32(i * 4, values[i]!, true);
  return { name, dims, dataType: onnx.TensorProto.DataType.FLOAT, rawData: raw };
}

/** A float32 value description; a string dimension is a named dynamic dimension. */
export function floatValue(name: string, dims: Array<number | string>): import('onnx-proto').onnx.IValueInfoProto {
  return {
    name,
    type: {
      tensorType: {
        elemType: onnx.TensorProto.DataType.FLOAT,
        shape: { dim: dims.map((d) => (typeof d === 'number' ? { dimValue: d } : { dimParam: d })) },
      },
    },
  };
}

export function intsAttr(name: string, ints: number[]): import('onnx-proto').onnx.IAttributeProto {
  return { name, ints, type: onnx.AttributeProto.AttributeType.INTS };
}

export function intAttr(name: string, i: number): import('onnx-proto').onnx.IAttributeProto {
  return { name, i, type: onnx.AttributeProto.AttributeType.INT };
}

export interface GraphSpec {
  name: string;
  doc: string;
  nodes: import('onnx-proto').onnx.INodeProto[];
  initializers: import('onnx-proto').onnx.ITensorProto[];
  inputs: import('onnx-proto').onnx.IValueInfoProto[];
  outputs: import('onnx-proto').onnx.IValueInfoProto[];
}

/** Serializes a graph to ONNX model bytes (opset 13, IR 7). */
export function encodeModel(spec: GraphSpec): Uint8Array {
  const model = onnx.ModelProto.create({
    irVersion: IR_VERSION,
    producerName: 'edge-agent models/build',
    producerVersion: '1',
    docString: spec.doc,
    opsetImport: [{ domain: '', version: OPSET }],
    graph: {
      name: spec.name,
      node: spec.nodes,
      initializer: spec.initializers,
      input: spec.inputs,
      output: spec.outputs,
    },
  });
  return onnx.ModelProto.encode(model).finish();
}
