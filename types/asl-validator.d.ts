declare module 'asl-validator' {
  interface AslValidationResult {
    isValid: boolean;
    errors: Array<{ message: string }>;
    errorsText(separator?: string): string;
  }
  /** Note: adds `QueryLanguage` to every state of the definition it is given (pass a copy). */
  export default function aslValidator(definition: unknown, options?: { checkPaths?: boolean; checkArn?: boolean }): AslValidationResult;
}
