// Mock receivers (SPEC §7): the engine part. The store, control API and UI build on these seams.
export { MockReceiverHost, type MockReceiverHostOptions } from './receiver-host';
export { createBehaviorState, decide, type BehaviorState, type Decision } from './behavior';
export { SignatureVerifier, checkSignature } from './signature-check';
export { loadOrCreateCertificate, CERT_FILE, KEY_FILE, type CertificatePair } from './self-signed-cert';
export { mulberry32, type Random } from '../../seeded-random';
