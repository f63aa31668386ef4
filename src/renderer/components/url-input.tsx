import { useState, type InputHTMLAttributes } from 'react';
import { maskUrlPassword } from '../../shared/url-credentials';

type Props = Omit<InputHTMLAttributes<HTMLInputElement>, 'value' | 'onChange'> & { value: string; onChange: (value: string) => void };

/**
 * A receiver URL field: a password in the URL (`user:password@`) shows as **** except while the
 * field is being edited, so a screen shared or shot never shows it (README, Decisions).
 */
export function UrlInput({ value, onChange, onFocus, onBlur, ...rest }: Props) {
  const [editing, setEditing] = useState(false);
  return (
    <input
      {...rest}
      value={editing ? value : maskUrlPassword(value)}
      onFocus={(e) => {
        setEditing(true);
        onFocus?.(e);
      }}
      onBlur={(e) => {
        setEditing(false);
        onBlur?.(e);
      }}
      // Only typed text is taken: the masked text is never written back.
      onChange={(e) => editing && onChange(e.target.value)}
    />
  );
}
